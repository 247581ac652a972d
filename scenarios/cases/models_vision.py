"""Model zoo, vision and audio: `transformers` vision/audio models from small configs, and torchvision-style
ResNet-18 / MobileNetV3 / EfficientNet written here in plain torch (the torchvision wheel does not load
beside the CPU torch of this project), with in-place activations as torchvision writes them. Random
weights, nothing downloaded; a dynamic batch (and sequence length for audio) and two input sets each."""
import torch
import transformers as tf
from torch import nn
from torch.export import Dim

from ..registry import Case, register
from ._zoo import BATCH


class Vision(nn.Module):
    """The main tensor output of a transformers vision/audio model for one positional input."""

    def __init__(self, model, input_name="pixel_values", output="last_hidden_state"):
        super().__init__()
        self.model, self.input_name, self.output = model, input_name, output

    def forward(self, x):
        return getattr(self.model(**{self.input_name: x}), self.output)


def _images(channels=3, size=32):
    return lambda: [(torch.randn(b, channels, size, size),) for b in (2, 3)]


def _vision(name, factory, description, size=32, output="last_hidden_state"):
    register(Case(name=name, make_module=lambda: Vision(factory(), output=output), input_sets=_images(size=size),
                  dynamic_shapes=({0: BATCH},), description=description))


_VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=32,
            patch_size=8)
_vision("model_vit", lambda: tf.ViTModel(tf.ViTConfig(**_VIT)), "ViT: patch embedding, CLS token, encoder")
_vision("model_deit", lambda: tf.DeiTModel(tf.DeiTConfig(**_VIT)), "DeiT: CLS and distillation tokens")
_vision("model_dinov2", lambda: tf.Dinov2Model(tf.Dinov2Config(**_VIT)),
        "DINOv2: interpolated position embeddings, layer scale")
_vision("model_swin", lambda: tf.SwinModel(tf.SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[2, 2],
                                                         num_heads=[2, 4], window_size=4)),
        "Swin: shifted windows, patch merging")
_vision("model_convnext", lambda: tf.ConvNextModel(tf.ConvNextConfig(num_channels=3, hidden_sizes=[16, 32],
                                                                     depths=[1, 1], num_stages=2)),
        "ConvNeXt: depthwise 7x7, channels-last LayerNorm, layer scale", output="pooler_output")
_vision("model_resnet_hf", lambda: tf.ResNetModel(tf.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32],
                                                                  depths=[1, 1], layer_type="basic")),
        "transformers ResNet: basic blocks, batch norm", output="pooler_output")
_vision("model_mobilenet_v2", lambda: tf.MobileNetV2Model(tf.MobileNetV2Config(depth_multiplier=0.35, image_size=32)),
        "MobileNetV2: inverted residuals, depthwise conv, ReLU6", output="pooler_output")
_vision("model_efficientnet", lambda: tf.EfficientNetModel(tf.EfficientNetConfig(
    image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320)),
    "EfficientNet: squeeze-excitation, SiLU, depthwise conv", output="pooler_output")
_vision("model_segformer", lambda: tf.SegformerModel(tf.SegformerConfig(num_encoder_blocks=2, depths=[1, 1],
                                                                        sr_ratios=[2, 1], hidden_sizes=[16, 32],
                                                                        num_attention_heads=[1, 2],
                                                                        mlp_ratios=[2, 2])),
        "SegFormer encoder: overlapping patch merging, efficient self-attention")
_vision("model_mobilevit", lambda: tf.MobileViTModel(tf.MobileViTConfig(image_size=32, hidden_sizes=[16, 24, 32],
                                                                        neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32])),
        "MobileViT: convolutions and transformers over unfolded patches", output="pooler_output")


# --- audio ---
class WhisperEncoder(nn.Module):
    """The zoo's tiny config by default; benchmarks pass a real model's sizes as WhisperConfig keywords."""

    def __init__(self, **config_overrides):
        super().__init__()
        sizes = dict(vocab_size=96, d_model=32, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4,
                     decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16,
                     max_source_positions=16)
        config = tf.WhisperConfig(**{**sizes, **config_overrides}, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                  decoder_start_token_id=1)
        self.encoder = tf.WhisperModel(config).get_encoder()

    def forward(self, input_features):
        return self.encoder(input_features).last_hidden_state


# Whisper's encoder checks that the features have exactly 2 * max_source_positions frames: batch is dynamic.
register(Case(name="model_whisper_encoder", make_module=WhisperEncoder,
              input_sets=lambda: [(torch.randn(b, 16, 32),) for b in (2, 3)], dynamic_shapes=({0: BATCH},),
              description="Whisper encoder: conv stem over log-mel frames, sinusoidal positions"))
register(Case(name="model_wav2vec2",
              make_module=lambda: Vision(tf.Wav2Vec2Model(tf.Wav2Vec2Config(
                  vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                  conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=8,
                  num_conv_pos_embedding_groups=4, do_stable_layer_norm=True, feat_extract_norm="layer")),
                  input_name="input_values"),
              input_sets=lambda: [(torch.randn(b, n),) for b, n in ((2, 400), (3, 560))],
              # Dim.AUTO: torch 2.13's range solver cannot prove the feature extractor's guards on a named Dim.
              dynamic_shapes=({0: BATCH, 1: Dim.AUTO},),
              description="Wav2Vec2: conv feature extractor over raw audio, grouped positional conv"))


# --- torchvision-style convolution networks (in-place activations, as torchvision writes them) ---
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.down is None else self.down(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    """torchvision's resnet18 layout (4 stages of 2 basic blocks) at width 1/4."""

    def __init__(self, width=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        layers, cin = [], width
        for i, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
            layers += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


class SqueezeExcite(nn.Module):
    def __init__(self, channels, squeeze, gate):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.act = nn.ReLU(inplace=True) if gate == "relu" else nn.SiLU(inplace=True)
        self.gate = nn.Hardsigmoid(inplace=True) if gate == "relu" else nn.Sigmoid()

    def forward(self, x):
        s = self.gate(self.fc2(self.act(self.fc1(nn.functional.adaptive_avg_pool2d(x, 1)))))
        return x * s


class InvertedResidual(nn.Module):
    def __init__(self, cin, expand, cout, kernel, stride, act, se_gate):
        super().__init__()
        layers = []
        if expand != cin:
            layers += [nn.Conv2d(cin, expand, 1, bias=False), nn.BatchNorm2d(expand), act(inplace=True)]
        layers += [nn.Conv2d(expand, expand, kernel, stride, kernel // 2, groups=expand, bias=False),
                   nn.BatchNorm2d(expand), act(inplace=True)]
        if se_gate:
            layers.append(SqueezeExcite(expand, max(8, expand // 4), se_gate))
        layers += [nn.Conv2d(expand, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.block(x)
        return x + y if self.residual else y


class MobileNetV3Small(nn.Module):
    """torchvision's mobilenet_v3_small layout, shortened: Hardswish/ReLU, SE with Hardsigmoid, dropout head.
    full=True: torchvision's whole table (11 blocks, 576 channels, 1024-wide head), as the benchmarks use it."""

    # (in, expanded, out, kernel, stride, activation, SE gate) per block: torchvision's table.
    BLOCKS = [(16, 16, 16, 3, 2, nn.ReLU, "relu"), (16, 72, 24, 3, 2, nn.ReLU, None),
              (24, 88, 24, 3, 1, nn.ReLU, None), (24, 96, 40, 5, 2, nn.Hardswish, "relu"),
              (40, 240, 40, 5, 1, nn.Hardswish, "relu"), (40, 240, 40, 5, 1, nn.Hardswish, "relu"),
              (40, 120, 48, 5, 1, nn.Hardswish, "relu"), (48, 144, 48, 5, 1, nn.Hardswish, "relu"),
              (48, 288, 96, 5, 2, nn.Hardswish, "relu"), (96, 576, 96, 5, 1, nn.Hardswish, "relu"),
              (96, 576, 96, 5, 1, nn.Hardswish, "relu")]

    def __init__(self, classes=10, full=False):
        super().__init__()
        cfg = self.BLOCKS if full else self.BLOCKS[:5]
        last, head = (576, 1024) if full else (96, 128)
        cout = cfg[-1][2]
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False),
            nn.BatchNorm2d(16),
            nn.Hardswish(inplace=True),
            *[InvertedResidual(*c) for c in cfg],
            nn.Conv2d(cout, last, 1, bias=False),
            nn.BatchNorm2d(last),
            nn.Hardswish(inplace=True),
        )
        self.classifier = nn.Sequential(
            nn.Linear(last, head), nn.Hardswish(inplace=True), nn.Dropout(0.2, inplace=True), nn.Linear(head, classes)
        )

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class EfficientNetB0Lite(nn.Module):
    """torchvision's efficientnet_b0 building blocks, shortened: MBConv with SiLU and SE, stochastic-depth-free."""

    def __init__(self, classes=10):
        super().__init__()
        cfg = [(16, 16, 16, 3, 1, nn.SiLU, "silu"), (16, 64, 24, 3, 2, nn.SiLU, "silu"),
               (24, 96, 24, 3, 1, nn.SiLU, "silu"), (24, 96, 40, 5, 2, nn.SiLU, "silu")]
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU(inplace=True),
                                      *[InvertedResidual(*c) for c in cfg],
                                      nn.Conv2d(40, 128, 1, bias=False), nn.BatchNorm2d(128), nn.SiLU(inplace=True))
        self.classifier = nn.Sequential(nn.Dropout(0.2, inplace=True), nn.Linear(128, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


for _name, _cls, _desc in (("model_resnet18_tv", ResNet18, "torchvision-style ResNet-18 (in-place ReLU, += residual)"),
                           ("model_mobilenet_v3_tv", MobileNetV3Small,
                            "torchvision-style MobileNetV3-small (in-place Hardswish/ReLU/Dropout, SE)"),
                           ("model_efficientnet_tv", EfficientNetB0Lite,
                            "torchvision-style EfficientNet-B0 blocks (in-place SiLU/Dropout, SE)")):
    register(Case(name=_name, make_module=_cls, input_sets=_images(size=64), dynamic_shapes=({0: BATCH},),
                  description=_desc))
