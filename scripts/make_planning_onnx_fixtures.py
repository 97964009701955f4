#!/usr/bin/python3
"""Exports the small PyTorch models poptfjs's planning tests plan as ONNX.

Written into test/fixtures/onnx/planning/ by default:

- tiny_encoder_external.onnx: a token embedding (1000 x 64) and a two-layer
  nn.TransformerEncoder (batch_first, 4 heads, feed-forward 256, no dropout)
  on 4 x 16 token ids (opset 14), saved with every initializer in the
  external data file tiny_encoder_external.weights, which is then deleted:
  the model file alone records the initializers' shapes, and planning it
  must never need the file;
- mlp_pipelined.onnx: four Linear(64, 64) layers with ReLUs between, on
  8 x 64 inputs (opset 13), each node placed as PopART's builder places it
  with virtualGraph and pipelineStage: layer i's nodes on IPU i // 2 and in
  pipeline stage i // 2 (the attributes __ipu_number and __pipeline_stage);
- mlp_with_loss.onnx: three Linear(64, 64) layers with ReLUs and a
  Linear(64, 10) classifier, exported in training mode with its
  cross-entropy loss (SoftmaxCrossEntropyLoss) on 8 x 64 inputs and 8
  labels of a dynamic batch (opset 13): a model exported with its loss
  tensor, `loss`, as a training plan needs it;
- vit_b_16_external.onnx: torchvision's vit_b_16 (86,567,656 parameters,
  every one drawn at random so that the exporter shares none between
  initializers) on images of a dynamic batch (opset 17), saved with every
  initializer in vit_b_16_external.weights, which is then deleted: the
  model a PyTorch user exports, planned without its 346 MB of weights.

Run with Debian's python (python3-torch, python3-torchvision, python3-onnx):

    /usr/bin/python3 scripts/make_planning_onnx_fixtures.py [--out DIR]
"""
import argparse
import os

import onnx
import torch
from torch import nn
from torchvision.models import vit_b_16


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(1000, 64)
        layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, tokens):
        return self.encoder(self.embedding(tokens))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(64, 64) for _ in range(4)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x


def export_external(out):
    path = os.path.join(out, 'tiny_encoder_external.onnx')
    torch.onnx.export(TinyEncoder().eval(), (torch.randint(0, 1000, (4, 16)),), path,
                      input_names=['tokens'], output_names=['hidden'], opset_version=14)
    model = onnx.load(path)
    weights = 'tiny_encoder_external.weights'
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True, location=weights, size_threshold=0)
    os.remove(os.path.join(out, weights))


def export_pipelined(out):
    path = os.path.join(out, 'mlp_pipelined.onnx')
    torch.onnx.export(Mlp().eval(), (torch.randn(8, 64),), path, input_names=['x'], output_names=['y'], opset_version=13)
    model = onnx.load(path)
    layer = 0
    for node in model.graph.node:
        # Nodes named /layers.N/... belong to layer N; a ReLU after layer N goes with it.
        if node.name.startswith('/layers.'):
            layer = int(node.name.split('.')[1].split('/')[0])
        node.attribute.append(onnx.helper.make_attribute('__ipu_number', layer // 2))
        node.attribute.append(onnx.helper.make_attribute('__pipeline_stage', layer // 2))
    onnx.checker.check_model(model)
    onnx.save_model(model, path)


class MlpWithLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.ModuleList([nn.Linear(64, 64) for _ in range(3)])
        self.classifier = nn.Linear(64, 10)

    def forward(self, x, labels):
        for layer in self.hidden:
            x = torch.relu(layer(x))
        return nn.functional.cross_entropy(self.classifier(x), labels)


def export_with_loss(out):
    path = os.path.join(out, 'mlp_with_loss.onnx')
    torch.onnx.export(MlpWithLoss().train(), (torch.randn(8, 64), torch.randint(0, 10, (8,))), path,
                      input_names=['x', 'labels'], output_names=['loss'], opset_version=13,
                      dynamic_axes={'x': {0: 'batch'}, 'labels': {0: 'batch'}}, training=torch.onnx.TrainingMode.TRAINING)
    onnx.checker.check_model(onnx.load(path))


def export_vit(out):
    model = vit_b_16(weights=None).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-0.05, 0.05)
    path = os.path.join(out, 'vit_b_16_external.onnx')
    torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), path, input_names=['images'], output_names=['logits'],
                      opset_version=17, dynamic_axes={'images': {0: 'batch'}, 'logits': {0: 'batch'}})
    weights = 'vit_b_16_external.weights'
    onnx.save_model(onnx.load(path), path, save_as_external_data=True, all_tensors_to_one_file=True, location=weights, size_threshold=0)
    os.remove(os.path.join(out, weights))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', default=os.path.join(os.path.dirname(__file__), '..', 'test', 'fixtures', 'onnx', 'planning'))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    export_external(args.out)
    export_pipelined(args.out)
    export_with_loss(args.out)
    export_vit(args.out)


if __name__ == '__main__':
    main()
