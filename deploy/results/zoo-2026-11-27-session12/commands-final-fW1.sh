source .gpu/hdr.sh; TCCD_PLAN_PROFILE=1 zoo fW1 150 --models gpt2 --backends eager,tccd --workloads train --batch small --warm --aot --first-step-only --timeout-s 60 --budget-s 140
