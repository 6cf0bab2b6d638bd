"""The playground page in a real headless browser (Debian's Chromium, driven by Playwright; no browser is
downloaded): load it, type a spec, move a slider, click a diagram node, drop a config — and see what a
person would see, with the CLI's numbers.

Where no Chromium is installed the tests are skipped, unless ARCHCOST_BROWSER=required (CI sets it, after
installing Chromium), which makes a missing browser a failure. `pytest tests/test_page.py --screenshots
docs/playground` also saves the screenshots docs/playground.md shows."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT, SPECS, run_cli

import archcost

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("ARCHCOST_BROWSER") == "required"
if CHROMIUM is None and not REQUIRED:
    pytest.skip("no Chromium on this machine (CI installs it and sets ARCHCOST_BROWSER=required)",
                allow_module_level=True)

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # a closed network
WAIT = 60_000  # ms: a cold compile on a busy two-core machine

TINY = """use std.embedding
use std.attention.gqa
use std.ffn.swiglu

model "Typed" {
  d = 512
  embedding(8000, d)
  repeat 4 as layers {
    gqa(d, q_heads = 8, kv_heads = 2, head_dim = 64) as attn
    swiglu(d, f = 1536) as ffn
  }
  rmsnorm(d)
  lm_head(d, 8000)
}
"""


@pytest.fixture(scope="module")
def server():
    import uvicorn

    from archcost.compiler.playground.app import create_app
    from archcost.compiler.playground.library import Library
    from archcost.compiler.playground.worker import Worker

    app = create_app(Library.of([]), Worker(limit=120.0))
    serving = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=serving.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not serving.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{serving.servers[0].sockets[0].getsockname()[1]}"
    serving.should_exit = True
    thread.join(30)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser, server, request):
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    opened = context.new_page()
    problems = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    opened.goto(server + "/")
    opened.wait_for_selector("#report tr[data-quantity=params]", timeout=WAIT)
    yield opened
    folder = request.config.getoption("--screenshots")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        opened.screenshot(path=str(Path(folder) / f"{request.node.name.removeprefix('test_')}.png"))
    context.close()
    assert problems == [], problems  # no script error on the page, whatever the test looked at


def cell(page, quantity: str) -> str:
    return page.inner_text(f"#report tr[data-quantity='{quantity}'] td:nth-child(2)")


def cli_value(spec: Path, quantity: str, *flags: str) -> str:
    code, out, _ = run_cli("eval", str(spec), *flags)
    assert code == 0
    line = next(line for line in out.splitlines() if line.split()[:1] == [quantity])
    return line.split()[1]


def wait_for_diagnostic(page, code: str) -> str:
    """The diagnostic shown once it carries `code`: the emptied editor compiles first and shows its own E104,
    which the typed text's answer then replaces."""
    page.wait_for_function(f"document.querySelector('#errors .diagnostic')?.textContent.includes('{code}')",
                           timeout=WAIT)
    return page.inner_text("#errors .diagnostic")


def test_typing_a_spec_shows_its_parameter_count(page):
    page.select_option("#spec-picker", "")
    page.click(".CodeMirror")
    page.keyboard.insert_text(TINY)
    page.wait_for_function("document.querySelector('#model-name').textContent === 'Typed'", timeout=WAIT)
    expected = archcost.load(TINY).evaluate("decode")["params"]
    page.wait_for_function(f"document.querySelector('#params').textContent.startsWith('{expected:,}')", timeout=WAIT)
    assert cell(page, "params") == f"{expected:,}"


def test_an_error_is_shown_in_place_with_the_clis_code(page):
    page.select_option("#spec-picker", "")
    page.click(".CodeMirror")
    page.keyboard.insert_text(TINY.replace("swiglu(d, f = 1536)", "swiglu(d, g = 1536)"))
    text = wait_for_diagnostic(page, "E201")
    assert "error[E201]" in text and "untitled.arch:10:" in text
    marked = page.inner_text(".cm-error-mark")
    assert marked and marked in "swiglu(d, g = 1536)"  # the caret's span, underlined in the editor
    line = page.locator(".CodeMirror-code > div", has=page.locator(".cm-error-line"))
    assert "swiglu(d, g = 1536)" in line.inner_text()
    assert page.locator("#report tr").count() == 0 and page.inner_text("#params") == ""  # no stale figure shown


def test_moving_the_s_slider_changes_the_state_to_the_clis_figure(page):
    before = cell(page, "state_bytes")
    page.focus("#slider-S")
    for _ in range(14):  # position 14 is S = 2^13 = 8192
        page.keyboard.press("ArrowRight")
    assert page.input_value("#field-S") == "8192"
    expected = cli_value(SPECS / "qwen3-8b.arch", "state_bytes", "--phase", "prefill", "--P", "8192", "--S", "8192")
    page.wait_for_function(f"document.querySelector(\"#report tr[data-quantity='state_bytes'] td:nth-child(2)\")"
                           f".textContent === '{expected}'", timeout=WAIT)
    assert cell(page, "state_bytes") == expected != before


def test_clicking_a_diagram_node_highlights_its_spec_line(page):
    page.click("#tabs button[data-tab=diagram]")
    page.wait_for_selector("#diagram g.node[data-node='block layers.attn']", timeout=WAIT)
    page.click("#diagram g.node[data-node='block layers.attn']")
    page.wait_for_selector(".cm-picked", timeout=WAIT)
    picked = page.locator(".CodeMirror-code > div", has=page.locator(".cm-picked"))
    assert picked.count() == 1 and "gqa(d, q_heads = 32" in picked.inner_text()
    page.wait_for_selector("#node-costs", timeout=WAIT)
    assert "attn: gqa" in page.inner_text("#node-panel")
    page.dblclick("#diagram g.node[data-node='block layers.attn']")  # the block opens into its ops
    page.wait_for_selector("#diagram g.node[data-node='layers.attn.q']", timeout=WAIT)
    page.click("#diagram g.node[data-node='layers.attn.q']")
    page.wait_for_function("document.querySelector('#node-panel').textContent.includes('16,777,216')", timeout=WAIT)


def test_dropping_a_config_gives_its_spec(page):
    config = ROOT / "tests" / "configs" / "llama-3.1-8b.json"
    page.evaluate("""([text, name]) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], name, {type: "application/json"}));
        window.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
    }""", [config.read_text(), config.name])
    page.wait_for_function("window.editor.getValue().includes('imported from llama-3.1-8b.json')", timeout=WAIT)
    _, imported, _ = run_cli("import", str(config))
    assert page.evaluate("window.editor.getValue()") == imported
    params = archcost.load(imported).evaluate("decode")["params"]
    page.wait_for_function(f"document.querySelector('#params').textContent.startsWith('{params:,}')", timeout=WAIT)


def test_formulas_are_typeset(page):
    page.click("#tabs button[data-tab=formulas]")
    page.wait_for_selector("#formulas .katex", timeout=WAIT)
    assert "kv_bytes_per_token" in page.inner_text("#formulas").replace("\u200b", "")


def test_plots_compare_and_layouts_draw(page):
    page.click("#tabs button[data-tab=plots]")
    page.wait_for_selector("#plot-roofline .uplot", timeout=WAIT)
    assert page.locator(".plots .uplot").count() == 4
    page.click("#tabs button[data-tab=compare]")
    page.click("#compare-chapter")
    page.wait_for_selector("#compare-table-out", timeout=WAIT)
    assert page.locator("#compare-table-out tr").count() == 6  # a header and the chapter's five models
    page.click("#tabs button[data-tab=layouts]")
    page.select_option("#layout-device", "h100_sxm")
    page.select_option("#layout-link", "nvlink4")
    page.click("#layout-run")
    page.wait_for_selector("#layout-cards td", timeout=WAIT)
    assert "all_reduce" in page.inner_text("#layout-text")


def test_the_compare_specs_are_found_by_filtering(page):
    """Issue 47: compare's 42 checkboxes were a wall of file names; typing part of a name leaves those it
    matches (and the ones already chosen)."""
    page.click("#tabs button[data-tab=compare]")
    page.fill("#compare-filter", "qwen3-8")
    shown = [t.strip() for t in page.locator("#compare-specs label:not([hidden])").all_inner_texts()]
    assert "this editor" in shown and any(t.endswith("qwen3-8b.arch") for t in shown)
    assert not any("deepseek" in t for t in shown)


def test_a_long_errors_caret_stays_under_its_column(page):
    """Issue 47: the narrow pane wrapped a diagnostic's source line, so the carets no longer sat under the
    argument: the rendered error keeps each line whole (it scrolls), the caret line under the source line."""
    page.select_option("#spec-picker", "")
    page.click(".CodeMirror")
    page.keyboard.insert_text(TINY.replace("swiglu(d, f = 1536)", "swiglu(d, f = 1536, " +
                                                                  "bias = false, residual_add = true, g = 1536)"))
    wait_for_diagnostic(page, "E201")
    assert page.eval_on_selector("#errors .diagnostic", "e => getComputedStyle(e).whiteSpace") == "pre"
    lines = page.inner_text("#errors .diagnostic").splitlines()
    source = next(i for i, line in enumerate(lines) if "swiglu(" in line)
    caret = lines[source + 1]
    assert lines[source][caret.index("^"):].startswith("g = 1536")


@pytest.mark.long
def test_every_specs_report_on_the_page_is_the_clis(page):
    """Each spec in specs/, opened from the page's list: every row of the report the browser shows is the row
    `archcost eval` prints, value and readable unit."""
    for spec in sorted(SPECS.glob("*.arch")):
        code, out, _ = run_cli("eval", str(spec), "--phase", "prefill", "--P", "8192")
        assert code == 0
        title, *lines = out.splitlines()
        page.select_option("#spec-picker", f"specs/{spec.name}")
        page.wait_for_function(f"document.querySelector('#report-title').textContent === {json.dumps(title)}",
                               timeout=WAIT)
        shown = page.eval_on_selector_all("#report tr[data-quantity]",
                                          "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
        printed = {}  # the table's rows come first; a later section's line never stands for one of them
        for line in lines:
            if line.startswith("  ") and len(line.split()) >= 3:
                printed.setdefault(line.split()[0], line.split(maxsplit=2)[1:])
        assert shown and all(printed[name] == [value, readable] for name, value, readable in shown), spec.name
