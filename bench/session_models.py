#!/usr/bin/python3
"""Exports the models of the ONNX session benchmark (bench/onnx_session_table.ts).

Each model is torch.onnx.export-ed in eval mode with random weights (seeded,
batch-norm running statistics drawn too, so folded batch norms are not the
identity) and written as NAME.onnx with its input NAME_input.bin (raw
little-endian float32) into the output directory:

- resnet18: torchvision's resnet18, 1 x 3 x 64 x 64 images;
- mobilenet_v2: torchvision's mobilenet_v2, 1 x 3 x 224 x 224 images;
- squeezenet1_1: torchvision's squeezenet1_1, 1 x 3 x 224 x 224 images;
- transformer_encoder: torch.nn.TransformerEncoder, 2 layers of d_model 256,
  4 heads, feed-forward 1024 (ReLU, no dropout), on 1 x 64 x 256 inputs
  (batch first), with a linear head to 10.

Run with Debian's python (python3-torch, python3-torchvision):

    /usr/bin/python3 bench/session_models.py OUT_DIR
"""
import os
import sys

import torch
from torch import nn
from torchvision.models import mobilenet_v2, resnet18, squeezenet1_1


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(256, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def randomize_batch_norms(model: nn.Module) -> nn.Module:
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.uniform_(m.bias, -0.2, 0.2)
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
    return model


MODELS = {
    'resnet18': (lambda: resnet18(), [1, 3, 64, 64]),
    'mobilenet_v2': (lambda: mobilenet_v2(), [1, 3, 224, 224]),
    'squeezenet1_1': (lambda: squeezenet1_1(), [1, 3, 224, 224]),
    'transformer_encoder': (lambda: Encoder(), [1, 64, 256]),
}


def export(name: str, out: str) -> None:
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = randomize_batch_norms(make()).eval()
    x = torch.randn(*shape)
    # Exported with gradients enabled: nn.TransformerEncoder's fast path (taken under no_grad) does not export.
    torch.onnx.export(model, (x,), os.path.join(out, f'{name}.onnx'), input_names=['input'], output_names=['output'], opset_version=14)
    x.numpy().astype('<f4').tofile(os.path.join(out, f'{name}_input.bin'))


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    for name in names:
        export(name, out)
        print(name)


if __name__ == '__main__':
    main()
