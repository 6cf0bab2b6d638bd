"""`archcost disaggregate`: prefill on one layout, decode on another, and the state handed between them."""

from __future__ import annotations

import json

from .common import Command, compile_spec, counting_flags, efficiency_flag, memory_flag, real, weights_flag, whole
from .layouts import LINKS_HELP


def disaggregate_arguments(parser) -> None:
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--prefill", required=True, metavar="DEGREES", help="the prefill side's layout, e.g. tp=8")
    parser.add_argument("--decode", required=True, metavar="DEGREES", help="the decode side's layout, e.g. tp=4,dp=2")
    parser.add_argument("--B", type=whole(1, name="B"), default=1, help="requests a step carries on each side")
    parser.add_argument("--P", type=whole(1, name="P"), default=4096, help="prompt tokens a request brings")
    parser.add_argument("--G", type=whole(1, name="G"), default=512, help="tokens a request generates")
    parser.add_argument("--device", required=True, help="the device sheet of both sides")
    memory_flag(parser)
    parser.add_argument("--link", default=None, help=f"{LINKS_HELP} (default: the device's own)")
    parser.add_argument("--network", default="ib_ndr", help="the link the state crosses between the sides")
    parser.add_argument("--compute", default=None, metavar="FORMAT", help="the peak the products run at")
    parser.add_argument("--ttft", type=real(0, 1e6, low_open=True, name="--ttft"), default=None, metavar="SECONDS",
                        help="target time to first token")
    parser.add_argument("--tpot", type=real(0, 1e6, low_open=True, name="--tpot"), default=None, metavar="SECONDS",
                        help="target time per output token")
    weights_flag(parser)
    efficiency_flag(parser)
    parser.add_argument("--json", action="store_true")
    counting_flags(parser)


def run_disaggregate(args) -> int:
    from ..cards.degrees import parse_layout
    from ..cards.disaggregation import disaggregate
    from ..front.hardware import device, link, server_link
    from ..render.layouts import disaggregation_text
    from ..terms.scenario import Scenario

    prefill, decode = parse_layout(args.prefill), parse_layout(args.decode)
    compiled = compile_spec(args.spec, args)
    from ..cards.expected import table_for

    sheet = device(args.device, args.memory)
    sheets = (sheet, server_link(sheet, args.link), link(args.network))
    report = disaggregate(compiled, prefill, decode, Scenario(B=args.B, P=args.P, G=args.G), sheets, args.ttft,
                          args.tpot, args.compute, table_for(sheets[0], args.efficiency_table))
    print(json.dumps(report.model_dump(), indent=2) if args.json else disaggregation_text(report, args.G), end=""
          if not args.json else "\n")
    return 0


COMMANDS = [Command("disaggregate", "prefill and decode on separate layouts: both sides' cards, the state handed "
                    "over, time to first token and per output token, the ratio of prefill to decode cards",
                    disaggregate_arguments, run_disaggregate)]
