source .gpu/hdr.sh
zoo trainTR 260 --models t5,resnet50 --workloads train --batch large --budget-s 240 --timeout-s 110 --top-kernels 40
zoo inferL $((585-($(date +%s)-S))) --models gpt2,bert,llama,t5,vit,convnext,resnet50 --workloads infer --batch large --budget-s $((560-($(date +%s)-S))) --timeout-s 60 --top-kernels 30
