#!/usr/bin/python3
"""Exports small PyTorch models to ONNX for poptfjs's importer tests.

Each model is written as NAME.onnx with one input NAME_input_0.pb and the
PyTorch output NAME_output_0.pb (ONNX TensorProtos), into
test/fixtures/onnx/torch/ by default:

- small_cnn: Conv2d, BatchNorm2d, ReLU, MaxPool2d, strided Conv2d,
  AdaptiveAvgPool2d, Flatten, Linear (opset 11);
- small_resnet: a torchvision ResNet stem with two BasicBlocks, the second
  strided with a downsampling shortcut (opset 13);
- small_transformer: a token embedding and a two-layer
  nn.TransformerEncoder (batch_first, GELU, no dropout), exported with a
  dynamic batch axis (opset 17, LayerNormalization);
- small_lstm: a two-layer bidirectional nn.LSTM and a GRU (batch_first)
  with a linear head (opset 14);
- squeezenet: torchvision's squeezenet1_1 (an AlexNet-like network of
  convolutions, ReLUs, max pools and concatenations, no batch norm) with 10
  classes and random weights, on 4 x 3 x 64 x 64 images, exported as the
  PopART guide exports AlexNet (only the output named, so the input keeps
  the name PyTorch gives it): the model of the Session API examples.

With --large, also exports torchvision's resnet18 (random weights, 45 MB) to
check bigger models by hand; it is not committed.

Run with Debian's python (python3-torch, python3-torchvision, python3-onnx):

    /usr/bin/python3 scripts/make_onnx_fixtures.py [--out DIR] [--large]
"""
import argparse
import os

import onnx
import onnx.numpy_helper
import torch
from torch import nn
from torchvision.models import resnet18, squeezenet1_1
from torchvision.models.resnet import BasicBlock


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(self.features(x))


class SmallResnet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        downsample = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16))
        self.blocks = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, stride=2, downsample=downsample))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class SmallTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 16)
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, activation='gelu', batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(16, 4)

    def forward(self, tokens):
        return self.head(self.encoder(self.embedding(tokens)))


class SmallLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(16, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(self.gru(self.lstm(x)[0])[0])


def randomize_batch_norm(model):
    """Gives batch-norm layers non-trivial running statistics, as a trained model has."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)


def export(model, example, name, out, opset, dynamic_axes=None):
    model.eval()
    with torch.no_grad():
        expected = model(example)
    path = os.path.join(out, f'{name}.onnx')
    torch.onnx.export(model, (example,), path, input_names=['input'], output_names=['output'],
                      opset_version=opset, dynamic_axes=dynamic_axes, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    for kind, value in (('input', example), ('output', expected)):
        tensor = onnx.numpy_helper.from_array(value.numpy(), name if kind == 'output' else 'input')
        with open(os.path.join(out, f'{name}_{kind}_0.pb'), 'wb') as f:
            f.write(tensor.SerializeToString())
    print(f'{path}: {os.path.getsize(path)} bytes, output {tuple(expected.shape)}')


def export_like_popart_guide(model, example, name, out):
    """Exports as the PopART guide does (opset 11, only the output named), with the input and PyTorch's output."""
    model.eval()
    with torch.no_grad():
        expected = model(example)
    path = os.path.join(out, f'{name}.onnx')
    torch.onnx.export(model, example, path, output_names=['output'], opset_version=11)
    loaded = onnx.load(path)
    onnx.checker.check_model(loaded)
    input_name = loaded.graph.input[0].name
    for kind, value, tensor_name in (('input', example, input_name), ('output', expected, 'output')):
        tensor = onnx.numpy_helper.from_array(value.numpy(), tensor_name)
        with open(os.path.join(out, f'{name}_{kind}_0.pb'), 'wb') as f:
            f.write(tensor.SerializeToString())
    print(f'{path}: {os.path.getsize(path)} bytes, input {input_name!r}, output {tuple(expected.shape)}')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument('--out', default=os.path.join(here, '..', 'test', 'fixtures', 'onnx', 'torch'))
    parser.add_argument('--large', action='store_true', help="also export torchvision's resnet18 (not committed)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)

    cnn = SmallCnn()
    randomize_batch_norm(cnn)
    export(cnn, torch.randn(2, 3, 16, 16), 'small_cnn', args.out, 11)

    resnet = SmallResnet()
    randomize_batch_norm(resnet)
    export(resnet, torch.randn(2, 3, 16, 16), 'small_resnet', args.out, 13)

    tokens = torch.randint(0, 50, (3, 7))
    export(SmallTransformer(), tokens, 'small_transformer', args.out, 17,
           dynamic_axes={'input': {0: 'batch'}, 'output': {0: 'batch'}})

    export(SmallLstm(), torch.randn(2, 5, 6), 'small_lstm', args.out, 14)

    export_like_popart_guide(squeezenet1_1(num_classes=10), torch.randn(4, 3, 64, 64), 'squeezenet', args.out)

    if args.large:
        big = resnet18(num_classes=100)
        randomize_batch_norm(big)
        export(big, torch.randn(1, 3, 224, 224), 'resnet18', args.out, 13)


if __name__ == '__main__':
    main()
