"""A training script that runs out of memory on a GPU, for `oomlab-cli record` (the GPU check
runs `oomlab-cli record -- python3 record_check.py`): a small model under a 2 GiB memory
fraction, its batch doubled each step until a step does not fit."""
import torch
torch.cuda.set_per_process_memory_fraction((2 << 30) / torch.cuda.get_device_properties(0).total_memory)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 8)).cuda()
optimizer = torch.optim.Adam(model.parameters())
for step in range(20):
    x = torch.randn(256 * 2 ** step, 1024, device="cuda")
    model(x).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    print("step", step, "batch", x.shape[0], flush=True)
