"""The serving questions a notebook asks of a loaded model, each the CLI command of the same name: `sweep`,
`capacity`, `roofline`, `state`, `request`, `layouts` (the memory search, or with targets the SLO search) and
`throughput`. Each checks its arguments as the CLI's flags do and returns a Report (or a Sweep of columns)."""

from __future__ import annotations

from archcost import checks
from archcost.compiler.terms.letters import PHASES

from .results import Report, Sweep


class Questions:
    """Mixed into Model: everything here reads `self.compiled`."""

    def sweep(self, phase: str | None = None, *, B=1, S=0, P=None, G=1) -> Sweep:
        """Every quantity over a grid of shapes of a phase at once, as `archcost sweep`: each letter a whole
        number, a range or a list (`S=range(0, 131073, 1024)`); up to 10 million points."""
        from archcost.compiler.serving.sweep import check_axes, check_size, sweep

        if phase is None:
            raise checks.bad_value(f"`sweep` needs a phase: one of {', '.join(PHASES)}")
        phase = checks.word("phase", phase, PHASES)
        given = {"B": B, "S": S, "P": checks.new_tokens(phase, P) if P is None else P, "G": G}
        values = {letter: _axis(letter, value) for letter, value in given.items()}
        check_axes(values, phase)
        check_size(values)
        return Sweep(phase, sweep(self.compiled, phase, values))

    def capacity(self, device: str, *, context: int = 8192, batch: int | None = None, workspace: int = 0,
                 reserve: float = 0.0, memory: str = "reported") -> Report:
        """How many requests of `context` positions fit on the device (B_max), the longest context (N_max)."""
        from archcost.compiler.render import tables
        from archcost.compiler.serving.capacity import capacity
        from archcost.compiler.serving.views import CompiledView

        result = capacity(CompiledView(self.compiled), _device(device, memory), checks.count("context", context, 1),
                          checks.count("workspace", workspace, 0), _fraction("reserve", reserve),
                          None if batch is None else checks.count("batch", batch, 1))
        return Report(result, tables.capacity_text(result))

    def roofline(self, device: str, phase: str = "decode", *, B: int = 1, S: int = 0, P: int | None = None,
                 G: int = 1, compute: str | None = None, memory: str = "reported") -> Report:
        """The call's arithmetic intensity, the device's ridge point, its bound and expected time."""
        from archcost.compiler.cards.expected import table_for
        from archcost.compiler.render import tables
        from archcost.compiler.serving.capacity import roofline

        phase = checks.word("phase", phase, PHASES)
        sheet = _device(device, memory)
        result = roofline(self.compiled, sheet, phase, checks.scenario(phase, B, S, P, G),
                          checks.text("compute", compute), False, table_for(sheet))
        return Report(result, tables.roofline_text(result))

    def state(self, contexts=(8192, 32768, 131072, 1048576), budget: int | None = None) -> Report:
        """The context state against context length (`archcost state`), and with a byte budget the longest
        context whose state fits it."""
        from archcost.compiler.render import tables
        from archcost.compiler.serving.state import profile

        lengths = [checks.count("contexts", h, 1) for h in contexts]
        found = profile(self.compiled, lengths, None if budget is None else checks.count("budget", budget, 1))
        return Report(found, tables.state_table([found]).text())

    def request(self, *, B: int = 1, S: int = 0, P: int = 128, G: int = 1) -> Report:
        """One request: its prefill of P after S cached positions and G decodes, summed (`archcost request`)."""
        from archcost.compiler.numbers.evaluate import evaluate
        from archcost.compiler.render import tables

        report = evaluate(self.compiled, "request", checks.scenario("request", B, S, P, G))
        return Report(report, tables.report_text(report.model_dump(exclude_none=True)))

    def layouts(self, devices: str, *, context: int | None = None, batch: int = 1, isl: int | None = None,
                osl: int | None = None, ttft: float | None = None, tpot: float | None = None,
                engine: str = "vllm", disaggregated: bool = False, top: int = 10, compute: str | None = None,
                memory: str = "reported", overlap_scheduler: str | None = None) -> Report:
        """The layouts of N cards (`"64xh100-sxm"`): with `context` those that hold the model, fastest first;
        with `isl`, `osl`, `ttft` and `tpot` the SLO search, by output tokens a second per card
        (`overlap_scheduler` "on" or "off": the engine's own unless given, as the CLI's flag)."""
        from archcost.compiler.front.hardware import fleet, server_link
        from archcost.compiler.render.layouts import fits_text, slo_text
        from archcost.compiler.terms.letters import MAX_CARDS

        count, sheet = fleet(checks.text("devices", devices), checks.word("memory", memory, ("reported", "nominal")),
                             MAX_CARDS, "devices")
        wire = server_link(sheet)
        slo = (isl, osl, ttft, tpot)
        if any(v is not None for v in slo):
            if any(v is None for v in slo) or context is not None:
                raise checks.bad_value("the SLO search takes isl, osl, ttft and tpot together, and no context")
            from archcost.compiler.serving.slo import search

            serving = self._serving(sheet, wire, engine, isl, osl, compute, overlap_scheduler)
            found = search(serving, count, checks.positive("ttft", ttft), checks.positive("tpot", tpot),
                           checks.count("top", top, 1), bool(disaggregated))
            return Report(found, slo_text(found))
        from archcost.compiler.cards.expected import table_for
        from archcost.compiler.cards.fleet import ranked

        fits = ranked(self.compiled, count, sheet, wire, checks.count("context", context or 8192, 1),
                      checks.count("batch", batch, 1), 0, checks.text("compute", compute), table_for(sheet),
                      top=checks.count("top", top, 1))
        return Report(fits, fits_text(self.name, fits, sheet, wire, context or 8192, batch))

    def throughput(self, device: str, *, isl: int, osl: int, layout: str = "tp=1", engine: str = "vllm",
                   concurrency: int | None = None, request_rate: float | None = None, compute: str | None = None,
                   price_per_hour: float | None = None, memory: str = "reported",
                   overlap_scheduler: str | None = None) -> Report:
        """Continuous batching's steady state on a layout (`archcost throughput`): the batch, TTFT, TPOT,
        tokens a second, and the cost per million tokens given a card's price an hour (`overlap_scheduler`
        "on" or "off": whether the engine schedules a step ahead, its own default unless given)."""
        from archcost.compiler.cards.degrees import parse_layout
        from archcost.compiler.front.hardware import server_link
        from archcost.compiler.render import tables
        from archcost.compiler.serving.throughput import served

        sheet = _device(device, memory)
        serving = self._serving(sheet, server_link(sheet), engine, isl, osl, compute, overlap_scheduler)
        result = served(serving, parse_layout(checks.text("layout", layout)),
                        None if concurrency is None else checks.count("concurrency", concurrency, 1),
                        checks.positive("price_per_hour", price_per_hour),
                        checks.positive("request_rate", request_rate))
        return Report(result, tables.throughput_text(result))

    def train(self, layout: str = "tp=1", *, seq: int, global_batch: int, micro_batch: int = 1,
              recompute: str = "none", zero: int = 0, optimizer: str = "adamw", grad_format: str = "fp32",
              dropout: bool = False, schedule: str | None = None, device: str | None = None,
              link: str | None = None, network: str | None = None, memory: str = "reported",
              compute: str | None = None, step_time: float | None = None, efficiency: float | None = None):
        """One training step on a layout (docs/training.md): per card its weights, gradients, optimizer states
        and activations, the step's FLOPs with recomputation and its collectives; with a device and a link, its
        bounds and MFU (at `step_time` if measured, at `efficiency` of the peak if given)."""
        from archcost.compiler.cards.degrees import parse_layout
        from archcost.compiler.train.optimizer import GRADIENT_BYTES, OPTIMIZERS
        from archcost.compiler.train.schedule import SCHEDULES
        from archcost.compiler.train.step import RECOMPUTE, TrainSetup, train_report

        if not isinstance(layout, str):
            raise checks.bad_value("`layout` is text such as \"tp=8,pp=8,sp\"")
        setup = TrainSetup(seq=checks.count("seq", seq, 1), global_batch=checks.count("global_batch", global_batch, 1),
                           micro_batch=checks.count("micro_batch", micro_batch, 1),
                           recompute=checks.word("recompute", recompute, RECOMPUTE),
                           zero=_stage_of_zero(zero),
                           optimizer=checks.word("optimizer", optimizer, tuple(OPTIMIZERS)),
                           grad_format=checks.word("grad_format", grad_format, tuple(GRADIENT_BYTES)),
                           dropout=checks.switch("dropout", dropout),
                           schedule=None if schedule is None else checks.word("schedule", schedule, SCHEDULES))
        sheets = _train_sheets(device, link, network, memory)
        compiled = self.compiled if self.conventions.logits == "all" else self._source.build(
            self.conventions.model_copy(update={"logits": "all"}))  # a step's loss reads every position's logits
        from archcost.compiler.cards.expected import table_for
        from archcost.compiler.render.training import train_text

        report = train_report(compiled, parse_layout(layout), setup, sheets, checks.positive("step_time", step_time),
                              checks.positive("efficiency", efficiency, 1.0), checks.text("compute", compute),
                              table_for(sheets[0]) if sheets is not None else None)
        return Report(report, train_text(report))

    def _serving(self, sheet, wire, engine: str, isl, osl, compute, overlap_scheduler: str | None = None):
        from archcost.compiler.cards.expected import table_for
        from archcost.compiler.serving.engines import ENGINES, preset
        from archcost.compiler.serving.steady import Serving
        from archcost.compiler.serving.throughput import no_table

        scheduler = checks.word("overlap_scheduler", overlap_scheduler, ("on", "off"), optional=True)
        engine = preset(checks.word("engine", engine, ENGINES), sheet.memory, sheet.name.startswith("a100"),
                        None if scheduler is None else scheduler == "on")
        table = table_for(sheet)
        if table is None:
            raise no_table(sheet)
        return Serving(self.compiled, sheet, wire, wire, engine, table, checks.text("compute", compute),
                       checks.count("isl", isl, 1), checks.count("osl", osl, 1))


def _axis(letter: str, value) -> list[int]:
    values = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(values, (list, tuple, range)) or not values:
        raise checks.bad_value(f"`{letter}` is a whole number, a range or a list of them")
    return [checks.count(letter, v, 0 if letter == "S" else 1) for v in values]


def _device(name, memory: str):
    from archcost.compiler.front.hardware import device

    return device(checks.text("device", name), checks.word("memory", memory, ("reported", "nominal")))


def _fraction(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise checks.bad_value(f"`{name}` is a fraction from 0 up to 1")
    return float(value)


def _train_sheets(device, link, network, memory: str):
    """(device, link, network) of a training step, or None without a device; inside one server the device's own
    link, as the CLI takes it."""
    from archcost.compiler.front.hardware import device as device_sheet
    from archcost.compiler.front.hardware import link as link_sheet
    from archcost.compiler.front.hardware import server_link

    names = [checks.text(n, v) for n, v in (("device", device), ("link", link), ("network", network))]
    if names[0] is None and names[1] is not None:
        raise checks.bad_value("`link` prices a step's collectives on a device: give `device` too")
    if names[0] is None:
        return None
    sheet = device_sheet(names[0], checks.word("memory", memory, ("reported", "nominal")))
    wire = server_link(sheet, names[1])
    return sheet, wire, link_sheet(names[2]) if names[2] else wire


def _stage_of_zero(value) -> int:
    if isinstance(value, bool) or value not in (0, 1, 2, 3):
        raise checks.bad_value("`zero` is a ZeRO stage: 0, 1, 2 or 3")
    return int(value)
