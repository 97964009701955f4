"""PyTorch reference for the poptfjs benchmarks: the same training steps, same shapes.

The MLP 784-512-512-10 (relu, softmax) and the small CNN (conv 16 3x3 same relu ->
max pool 2 -> conv 32 3x3 same relu -> flatten -> dense 10 softmax, 28x28x1 inputs),
batch 64, categorical cross-entropy, SGD lr 0.01, Glorot-uniform weights and zero
biases, as in bench/mlp_training_step.ts and bench/cnn_training_step.ts. PyTorch runs
with the threads it picks by itself, in its native NCHW layout.

Standalone, it prints the median step time of each case:

    python3 bench/pytorch_reference.py [--rounds 30]

With --serve, bench/run.ts drives it step by step so that its cases take turns with the
tfjs cases in the same rounds: it prints one JSON line describing itself, then for each
case name read from stdin it runs one step and prints that step's time in milliseconds.
"""

import argparse
import json
import statistics
import sys
import time

import torch
from torch import nn

BATCH = 64


def glorot(module: nn.Module) -> nn.Module:
    """Glorot-uniform weights and zero biases, the tfjs layers' defaults."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return module


def mlp() -> nn.Module:
    return glorot(nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)))


def cnn() -> nn.Module:
    return glorot(
        nn.Sequential(
            nn.Conv2d(1, 16, 3, padding="same"),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding="same"),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(32 * 14 * 14, 10),
        )
    )


class TrainingStep:
    """One SGD step of a model on a fixed batch, the loss read back to the host."""

    def __init__(self, model: nn.Module, input_shape: tuple) -> None:
        generator = torch.Generator().manual_seed(1)
        self.model = model
        self.x = torch.randn((BATCH, *input_shape), generator=generator)
        self.y = nn.functional.one_hot(torch.randint(0, 10, (BATCH,), generator=generator), 10).float()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def __call__(self) -> float:
        """Runs the step and returns its time in milliseconds."""
        start = time.perf_counter()
        self.optimizer.zero_grad(set_to_none=True)
        log_probabilities = torch.log_softmax(self.model(self.x), dim=1)
        loss = -(self.y * log_probabilities).sum(dim=1).mean()
        loss.backward()
        self.optimizer.step()
        loss.item()
        return (time.perf_counter() - start) * 1000


def cases() -> dict:
    torch.manual_seed(0)
    return {"mlp": TrainingStep(mlp(), (784,)), "cnn": TrainingStep(cnn(), (1, 28, 28))}


def describe() -> dict:
    return {"torch": torch.__version__, "threads": torch.get_num_threads(), "python": sys.version.split()[0]}


def serve() -> None:
    steps = cases()
    print(json.dumps({**describe(), "cases": list(steps)}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        if name not in steps:
            print(json.dumps({"error": f"unknown case {name!r}"}), flush=True)
            continue
        print(f"{steps[name]():.4f}", flush=True)


def standalone(rounds: int, warmup: int) -> None:
    steps = cases()
    info = describe()
    print(f"PyTorch {info['torch']}, {info['threads']} thread(s), median of {rounds} steps")
    for name, step in steps.items():
        for _ in range(warmup):
            step()
        times = [step() for _ in range(rounds)]
        print(f"{name:4}  {statistics.median(times):8.2f} ms/step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="run steps on request (one case name per stdin line)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        serve()
    else:
        standalone(args.rounds, args.warmup)


if __name__ == "__main__":
    main()
