"""`archcost train`: one training step of a model on a layout (docs/training.md)."""

from __future__ import annotations

import json

from .common import Command, compile_spec, counting_flags, efficiency_flag, memory_flag, real, whole
from .layouts import LINKS_HELP


def train_arguments(parser) -> None:
    from ..train.optimizer import GRADIENT_BYTES, OPTIMIZERS
    from ..train.schedule import SCHEDULES

    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--seq", type=whole(1, name="--seq"), required=True, help="tokens per sequence")
    parser.add_argument("--global-batch", type=whole(1, name="--global-batch"), required=True,
                        help="sequences per step, over all data-parallel replicas")
    parser.add_argument("--micro-batch", type=whole(1, name="--micro-batch"), default=1,
                        help="sequences per micro-batch on one replica")
    parser.add_argument("--layout", default="tp=1", metavar="DEGREES",
                        help="e.g. `tp=8,pp=8,dp=4,sp,vp=3`; ep, cp, node=8 cards per server")
    parser.add_argument("--recompute", choices=("none", "selective", "full"), default="none")
    parser.add_argument("--zero", type=int, choices=(0, 1, 2, 3), default=0,
                        help="ZeRO stage: 1 shards optimizer states over dp, 2 gradients too, 3 weights too")
    parser.add_argument("--optimizer", choices=tuple(OPTIMIZERS), default="adamw")
    parser.add_argument("--grad-format", choices=tuple(GRADIENT_BYTES), default="fp32",
                        help="the format gradients are accumulated in (Megatron: fp32)")
    parser.add_argument("--dropout", choices=("on", "off"), default="off",
                        help="keep dropout masks for the backward pass (GPT-3 and Megatron's runs: on)")
    parser.add_argument("--attention-kernel", choices=("flash", "eager"), default="flash",
                        help="FlashAttention keeps no score matrix (default); eager keeps it for the backward, as "
                             "Megatron did before 2022 (Korthikanti et al. 2022, Table 2)")
    parser.add_argument("--schedule", choices=SCHEDULES, default=None,
                        help="pipeline schedule (default: interleaved with vp > 1, else 1f1b)")
    parser.add_argument("--device", default=None, help="a device sheet, for the step's bounds (with --link)")
    memory_flag(parser)
    parser.add_argument("--link", default=None, help=LINKS_HELP)
    parser.add_argument("--network", default=None, help="the link between servers (default: --link)")
    parser.add_argument("--compute", default=None, metavar="FORMAT", help="the peak the products run at "
                        "(default: bf16, else fp16)")
    parser.add_argument("--step-time", type=real(0, 1e9, low_open=True, name="--step-time"), default=None,
                        metavar="SECONDS", help="a measured step time: MFU and HFU at it")
    parser.add_argument("--efficiency", type=real(0, 1, low_open=True, name="--efficiency"), default=None,
                        help="the fraction of the peak the products reach: predicts the step time")
    efficiency_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)
    parser.set_defaults(logits="all")  # a training step computes every position's logits


def run_train(args) -> int:
    from ..cards.degrees import parse_layout
    from ..front.hardware import device, link, server_link
    from ..render.training import train_text
    from ..terms.letters import bad_value
    from ..train.step import TrainSetup, train_report

    layout = parse_layout(args.layout)
    if args.logits != "all":
        raise bad_value("`--logits last`: a training step's loss reads every position's logits")
    compiled = compile_spec(args.spec, args)
    if args.device is None and args.link is not None:
        raise bad_value("`--link` prices a step's collectives on a device: give `--device` too")
    sheets = None
    if args.device is not None:  # inside one server the device's own link, as `throughput` and `layouts` take
        wire = server_link(device(args.device, args.memory), args.link)
        sheets = (device(args.device, args.memory), wire, link(args.network) if args.network else wire)
    setup = TrainSetup(seq=args.seq, global_batch=args.global_batch, micro_batch=args.micro_batch,
                       recompute=args.recompute, zero=args.zero, optimizer=args.optimizer,
                       grad_format=args.grad_format, dropout=args.dropout == "on", schedule=args.schedule,
                       attention_kernel=args.attention_kernel)
    from ..cards.expected import table_for

    table = table_for(sheets[0], args.efficiency_table) if sheets is not None else None
    report = train_report(compiled, layout, setup, sheets, args.step_time, args.efficiency, args.compute, table)
    print(json.dumps(report.model_dump(), indent=2) if args.json else train_text(report), end="\n" if args.json
          else "")
    return 0


COMMANDS = [Command("train", "one training step on a layout: per-card memory, FLOPs with recomputation, "
                    "communication, MFU", train_arguments, run_train)]
