#!/bin/sh
# Runs golden index kernels (tests/codegen/cuda/golden/{stack,cat,cat3,embedding,dropout}*.cu), the
# fixed-layout normalisation (channels_last_norm_bf16.cu), the tiled kernels (tile_*.cu) and the
# row kernels that gather (embedding_rms_norm_rows*.cu, row_shim.h: shuffles between barriers;
# embedding_pair_layer_norm_rows*_sym.cu: symbolic ones over run-time rows) on the
# HOST: the generated CUDA C is compiled by g++ with shim.h (thread/block indices, intrinsics;
# prep.py turns the inline-PTX vector stores into memcpy and counts vector-path calls) and every
# thread of a 64- or 1056-block grid is run in turn. Each case runs its vector path (aligned
# operands) and its per-element path (an operand shifted by one element) against a reference or
# against each other. Checks the generated source's meaning without a GPU (no device effects:
# alignment faults, the PTX itself); not a CTest test (g++ over ~30M points takes ~20 s).
#   tests/codegen/cuda/host_emulation/run.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
golden=$here/../golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here"/shim.h "$here"/tile_shim.h "$here"/harness.h "$here"/*_main.cc "$work"/
for k in stack_bf16 cat_f32 cat3_bf16 dropout_bf16 embedding_bf16 channels_last_norm_bf16; do python3 "$here/prep.py" "$golden/$k.cu" "$work/$k.cc"; done
cd "$work"
for m in stack cat cat3 dropout emb norm; do
  g++ -O1 -std=c++17 -fpermissive -w "${m}_main.cc" -o "$m"
  ./"$m"
done
# Tiled kernels share memory across a block's threads: tile_shim.h runs each thread as a host
# thread (a barrier for __syncthreads).
for k in tile_transpose_cast_bf16 tile_nchw_to_nhwc_bf16; do
  python3 "$here/prep.py" "$golden/$k.cu" "$work/$k.cc"
  sed -i 's/^#include "shim.h"$/#include "tile_shim.h"/' "$work/$k.cc"
done
for c in 1 2; do
  g++ -O1 -std=c++20 -fpermissive -w -pthread -DTILE_CASE=$c tile_main.cc -o tile$c
  ./tile$c
done
# Row kernels that gather (row gathers, reduction_fusion.h): threads of a block share their
# shuffles (row_shim.h); the contig entry's vector gathers, its per-element fallback (a table one
# element off) and the strided entry, against a host reference.
cp "$here"/row_shim.h "$here"/rowg_main.cc "$work"/
for k in embedding_rms_norm_rows_f32 embedding_rms_norm_rows_tail_f32; do
  python3 "$here/prep.py" "$golden/$k.cu" "$work/$k.cc"
  sed -i 's/^#include "shim.h"$/#include "row_shim.h"/' "$work/$k.cc"
done
for c in 1 2; do
  g++ -O1 -std=c++20 -fpermissive -w -pthread -DROWG_CASE=$c rowg_main.cc -o rowg$c
  ./rowg$c
done
# Symbolic row gathers (symbolic_kernels.h): the dynamic bench's first layer norm gathering its
# token and position embeddings over run-time rows (p.size), widths 256 and 40 (a tail).
cp "$here"/rowg_sym_main.cc "$work"/
for k in embedding_pair_layer_norm_rows_bf16_sym embedding_pair_layer_norm_rows_tail_bf16_sym; do
  python3 "$here/prep.py" "$golden/$k.cu" "$work/$k.cc"
  sed -i 's/^#include "shim.h"$/#include "row_shim.h"/' "$work/$k.cc"
done
for c in 1 2; do
  g++ -O1 -std=c++20 -fpermissive -w -pthread -DSYMG_CASE=$c rowg_sym_main.cc -o symg$c
  ./symg$c
done
# Depthwise templates (cuda_depthwise_emitter.h): forward, input gradient and weight partials of
# ConvNeXt-T's stage 2, the first images, bit-identical to a host sum in the same order.
for k in depthwise_conv7_bf16_template depthwise_conv7_dgrad_bf16_template depthwise_weight_partials7_bf16_template; do
  python3 "$here/prep.py" "$golden/$k.cu" "$work/$k.cc"
done
cp "$here"/dw_main.cc "$work"/
for c in 1 2 3; do
  g++ -O1 -std=c++17 -fpermissive -w -DDW_CASE=$c dw_main.cc -o dw$c
  ./dw$c
done
