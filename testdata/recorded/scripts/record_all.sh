#!/bin/sh
# Re-records every trace in testdata/recorded with Debian's CPU PyTorch
# (apt-get install python3-torch python3-torchvision; torch 1.13.1, built
# without Kineto, so torch.profiler writes the legacy autograd-profiler JSON).
set -e
cd "$(dirname "$0")"
PY=${PYTHON:-/usr/bin/python3}
for s in healthy dataloader_workers0 item_per_step unfused_elementwise optimizer_no_foreach \
         inference_grad zero_grad_fill small_batch gloo_allreduce; do
	echo "== $s"
	"$PY" "$s.py" >/dev/null
done
