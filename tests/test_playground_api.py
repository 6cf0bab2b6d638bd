"""`archcost serve`'s JSON API, driven over HTTP (Starlette's test client) against a real compiler process:
what it answers, what it refuses, and that no spec can hang it. The page itself is driven in a browser
by test_page.py; the page's numbers against the CLI's for every spec are checked here, on the API the page
reads them from."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from helpers import ROOT, SPECS, run_cli
from starlette.testclient import TestClient

from archcost.compiler.playground.app import create_app
from archcost.compiler.playground.library import Library
from archcost.compiler.playground.worker import Worker

TINY = """use std.embedding
use std.ffn.swiglu

model "tiny" {
  d = 64
  embedding(1000, d)
  swiglu(d, f = 256) as ffn
  lm_head(d, 1000)
}
"""


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """A server of the shipped specs and one named spec that reads a block from its own folder."""
    folder = tmp_path_factory.mktemp("named")
    (folder / "local.arch").write_text("block wide(d) {\n  linear up: d -> 2 * d\n  linear down: 2 * d -> d\n}\n")
    (folder / "mine.arch").write_text('use "local.arch"\n' + TINY.replace("swiglu(d, f = 256) as ffn", "wide(d)"))
    with serving(Library.of([folder / "mine.arch"])) as test_client:
        yield test_client


def post(client, method: str, payload: dict):
    return client.post(f"/api/{method}", content=json.dumps(payload), headers=JSON)


JSON = {"Content-Type": "application/json"}


def serving(library: Library, limit: float = 120.0) -> TestClient:
    return TestClient(create_app(library, Worker(limit=limit), hosts=("testserver",)))


def test_the_page_and_its_assets_are_served_without_network(client):
    page = client.get("/")
    assert page.status_code == 200
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text):
        assert client.get(asset).status_code == 200, asset
    assert "http" not in re.sub(r"<!--.*?-->", "", page.text, flags=re.S).replace("http-equiv", "")


def test_the_catalogue_lists_every_shipped_spec_and_stdlib_file(client):
    catalogue = client.get("/api/catalogue").json()
    names = {spec["name"] for spec in catalogue["specs"]}
    assert {f"specs/{p.name}" for p in SPECS.glob("*.arch")} <= names
    assert len(catalogue["stdlib"]) == len(list((ROOT / "stdlib").rglob("*.arch")))
    assert "h100_sxm" in catalogue["devices"] and "nvlink4" in catalogue["links"]
    for rule in catalogue["highlight"]:  # the editor's rules are regexes both engines read the same way
        re.compile(rule["regex"])


def test_compile_gives_the_parameter_count_the_cli_prints(client):
    answer = post(client, "compile", {"spec": {"text": TINY}}).json()["ok"]
    code, out, _ = run_cli("eval", "--phase", "decode", "--json", _written(TINY))
    tables, swiglu, its_norm = 64 * 1000 * 2, 3 * 64 * 256, 64
    assert code == 0 and answer["params"] == json.loads(out)["params"] == tables + swiglu + its_norm


def _written(text: str) -> str:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "untitled.arch"
    path.write_text(text)
    return str(path)


def test_an_error_comes_back_with_the_cli_text_and_its_span(client):
    broken = TINY.replace("swiglu(d, f = 256)", "swiglu(d, g = 256)")
    problem = post(client, "compile", {"spec": {"text": broken}}).json()["problem"]
    _, _, err = run_cli("check", path := _written(broken))
    assert problem["error"] == err.strip().replace(path, "untitled.arch")
    first = problem["diagnostics"][0]
    assert first["in_editor"] and first["span"]["line"] == 7 and first["code"] == err.split("error[")[1][:4]


def test_a_spec_named_by_path_is_refused(client):
    for name in ("/etc/passwd", "../specs/qwen3-8b.arch", str(SPECS / "qwen3-8b.arch")):
        response = post(client, "compile", {"spec": {"text": "x", "source": name}})
        assert response.status_code == 404 and response.json()["problem"]["diagnostics"][0]["code"] == "E112"


def test_editor_text_that_names_a_file_is_text_not_the_file(client, tmp_path):
    """Issue 45: `{"spec": {"text": "/etc/passwd"}}` answered with the file's first line inside an E100 error. The
    page's text is spec text, whatever it looks like: the file it names is never opened."""
    secret = tmp_path / "secret.txt"
    secret.write_text("the first line of a private file\n")
    for text in (str(secret), "/etc/passwd"):
        answer = post(client, "compile", {"spec": {"text": text}}).json()
        assert "problem" in answer and answer["problem"]["diagnostics"][0]["code"] == "E100", answer
        shown = json.dumps(answer)
        assert "private file" not in shown and "root:" not in shown
        assert answer["problem"]["diagnostics"][0]["span"]["file"] == "untitled.arch"


def test_new_text_stands_for_untitled_arch_as_the_docs_say(client):
    answer = post(client, "compile", {"spec": {"text": TINY, "source": "untitled.arch"}}).json()
    assert answer["ok"]["params"] == 64 * 1000 * 2 + 3 * 64 * 256 + 64


@pytest.mark.parametrize(("method", "payload", "field"), [
    ("compare", {"specs": []}, "specs"),
    ("node", {"spec": {"text": TINY}, "node": 5}, "node"),
    ("plots", {"spec": {"text": TINY}, "device": 5}, "device"),
    ("layout", {"spec": {"text": TINY}, "device": 5}, "device"),
    ("diagram", {"spec": {"text": TINY}, "blocks": "yes"}, "blocks"),
    ("evaluate", {"spec": {"text": TINY}, "scenario": {"B": "8"}}, "scenario.B"),
    ("evaluate", {"spec": {"text": TINY}, "scenario": {"B": True}}, "scenario.B"),
    ("evaluate", {"spec": {"text": 7}}, "spec.text"),
    ("evaluate", {"spec": {"text": TINY}, "conventions": {"options": {"a": 1}}}, "conventions.options.a"),
    ("evaluate", {"spec": {"text": TINY}, "table": "x"}, "table"),
    ("evaluate", {}, "spec"),
    ("formulas", {"spec": None}, "spec"),                        # found by tools/fuzz.py --target server
    ("node", {"spec": {"text": TINY}, "node": None}, "node"),
    ("import", {"config": {"model_type": "llama"}}, "config"),
])
def test_every_request_field_is_checked(client, method, payload, field):
    """Issue 45: `compare` with `specs: []`, `node: 5` and `device: 5` answered 500. Each field of the wrong type,
    missing, or not the method's is an E111 that names it, answered 200 with the problem."""
    response = post(client, method, payload)
    assert response.status_code == 200, response.text
    first = response.json()["problem"]["diagnostics"][0]
    assert first["code"] == "E111" and f"`{field}" in first["message"], first


def test_deep_json_is_refused_before_it_is_parsed(client):
    """Issue 45: a body nested 200,000 deep raised RecursionError (a 500, a traceback in the log)."""
    for body in (b"[" * 200_000 + b"]" * 200_000, b'{"spec": ' + b"[" * 40 + b"]" * 40 + b"}"):
        response = client.post("/api/compile", content=body, headers=JSON)
        first = response.json()["problem"]["diagnostics"][0]
        assert response.status_code == 400 and first["code"] == "E111" and "nests more than" in first["message"]
    inside_a_string = {"spec": {"text": "# " + "[" * 5000 + "\n" + TINY}}
    assert post(client, "compile", inside_a_string).json()["ok"]["name"] == "tiny"


def test_a_request_past_the_size_limit_is_refused_unread(client):
    """A body larger than the server reads is answered 413 (E113), before any of it is parsed."""
    from archcost.compiler.playground.app import MAX_BODY

    body = json.dumps({"spec": {"text": "# " + "x" * MAX_BODY + "\n" + TINY}})
    response = client.post("/api/compile", content=body, headers={"Content-Type": "application/json"})
    first = response.json()["problem"]["diagnostics"][0]
    assert response.status_code == 413 and first["code"] == "E113" and f"{MAX_BODY:,} bytes" in first["message"]


def test_requests_from_other_sites_are_refused(client):
    """A form of another site posts text/plain without a preflight; a rebound DNS name is not ours."""
    plain = client.post("/api/compile", content=json.dumps({"spec": {"text": TINY}}), headers={"Content-Type":
                                                                                             "text/plain"})
    assert plain.status_code == 415 and plain.json()["problem"]["diagnostics"][0]["code"] == "E111"
    assert client.get("/api/catalogue", headers={"Host": "attacker.example"}).status_code == 400
    assert "access-control-allow-origin" not in client.get("/api/catalogue", headers={"Origin": "https://a.example"}
                                                           ).headers


def test_files_outside_the_static_folder_are_not_served(client):
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/api/../pyproject.toml"):
        assert client.get(path).status_code == 404, path


def test_text_with_no_file_reads_the_standard_library_only(client):
    text = 'use "../secret.arch"\n' + TINY
    problem = post(client, "compile", {"spec": {"text": text}}).json()["problem"]
    assert problem["diagnostics"][0]["code"] in ("E102", "E107")


def test_malformed_requests_get_an_error_value(client):
    assert post(client, "nosuch", {}).status_code == 404
    bad = client.post("/api/compile", content=b"[1, 2", headers=JSON)
    assert bad.status_code == 400 and bad.json()["problem"]["diagnostics"][0]["code"] == "E111"
    answer = post(client, "evaluate", {"spec": {"text": TINY}, "scenario": {"B": 0}}).json()
    assert answer["problem"]["diagnostics"][0]["code"] == "E401"  # the API's own check, as on the command line


def test_a_spec_that_runs_past_the_limit_stops_the_compiler_not_the_server():
    """While the compiler works on a slow spec the server still answers; past the limit the compiler is
    stopped (E110) and the next request is answered by a fresh one."""
    import threading

    slow = "use std.embedding\nuse std.ffn.swiglu\nmodel \"slow\" {\n  d = 64\n  embedding(1000, d)\n" + \
        "".join(f"  swiglu(d, f = {64 + i}) as f{i}\n" for i in range(950)) + "}\n"  # within the op limit (E114)
    with serving(Library.of([]), limit=0.5) as client:
        answers = []
        working = threading.Thread(target=lambda: answers.append(post(client, "compile", {"spec": {"text": slow}})))
        working.start()
        assert client.get("/api/catalogue").status_code == 200 and working.is_alive()  # not blocked by it
        working.join()
        assert answers[0].json()["problem"]["diagnostics"][0]["code"] == "E110"
        assert post(client, "compile", {"spec": {"text": TINY}}).json()["ok"]["name"] == "tiny"


def test_a_served_spec_compiles_from_its_own_folder(client):
    catalogue = client.get("/api/catalogue").json()
    named = next(spec for spec in catalogue["specs"] if spec["named"])
    answer = post(client, "compile", {"spec": {"text": named["text"], "source": named["name"]}}).json()
    assert "ok" in answer, answer


def test_layout_and_compare_tables_are_the_clis(client):
    qwen = {"text": (SPECS / "qwen3-8b.arch").read_text(), "source": "specs/qwen3-8b.arch"}
    answer = post(client, "layout", {"spec": qwen, "scenario": {"phase": "decode", "S": 4096}, "degrees": "tp=8",
                                      "device": "h100_sxm", "link": "nvlink4"}).json()["ok"]
    _, out, _ = run_cli("layout", str(SPECS / "qwen3-8b.arch"), "--layout", "tp=8", "--phase", "decode", "--S", "4096",
                    "--device", "h100_sxm", "--link", "nvlink4")
    assert answer["text"] == out
    assert "all-reduce over tp" in html.unescape(answer["diagram"])  # the collective drawn on its edges
    llama = {"text": (SPECS / "llama-3.1-8b.arch").read_text(), "source": "specs/llama-3.1-8b.arch"}
    table = post(client, "compare", {"specs": [qwen, llama], "table": "architecture"}).json()["ok"]
    _, out, _ = run_cli("compare", "--table", "architecture", str(SPECS / "qwen3-8b.arch"),
                    str(SPECS / "llama-3.1-8b.arch"))
    assert table["text"] == out


def test_a_diagram_node_names_the_spec_line_it_came_from(client):
    qwen = {"text": (SPECS / "qwen3-8b.arch").read_text(), "source": "specs/qwen3-8b.arch"}
    answer = post(client, "diagram", {"spec": qwen, "blocks": False}).json()["ok"]
    lines = qwen["text"].splitlines()
    query = answer["nodes"]["layers.attn.q"]
    assert query["kind"] == "linear" and "gqa(" in lines[query["span"]["line"] - 1]
    assert query["defined"]["file"] == "std/attention/gqa.arch"
    assert all(f"<title>{name}</title>" in answer["svg"] for name in answer["nodes"] if "." in name and
               not name.startswith("block "))
    op = post(client, "node", {"spec": qwen, "scenario": {"phase": "decode", "S": 8192},
                               "node": "layers.attn.q"}).json()["ok"]
    assert op["params"] == 4096 * 4096 and op["layers"] == 36


def test_an_imported_config_is_the_clis_import(client):
    config = ROOT / "tests" / "configs" / "qwen3-8b.json"
    answer = post(client, "import", {"config": config.read_text(), "file": config.name}).json()["ok"]
    _, out, _ = run_cli("import", str(config))
    assert answer["text"] == out


PHASES = [("prefill", {"P": 8192}), ("decode", {"S": 8192}), ("request", {"P": 1024, "G": 256})]


@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.arch")), ids=lambda p: p.stem)
def test_the_pages_numbers_are_the_clis(client, spec):
    """Every spec in specs/, three request shapes: the report the page shows is `archcost eval`'s, byte for byte."""
    source = {"text": spec.read_text(), "source": f"specs/{spec.name}"}
    for phase, shape in PHASES:
        answer = post(client, "evaluate", {"spec": source, "scenario": {"phase": phase, **shape}}).json()["ok"]
        flags = [item for letter, value in shape.items() for item in (f"--{letter}", str(value))]
        _, out, _ = run_cli("eval", str(spec), "--phase", phase, *flags)
        assert answer["text"].rstrip("\n") == out.rstrip("\n"), (spec.name, phase)
        _, out, _ = run_cli("eval", str(spec), "--phase", phase, "--json", *flags)
        assert answer["data"] == json.loads(out)


def test_the_command_prints_its_address_and_serves_the_page(tmp_path):
    """`archcost serve --port 0 --no-browser`, as a user starts it: the address it prints (the port it bound)
    serves the page, and a spec that is not a file is refused before the server starts."""
    import subprocess
    import sys
    import urllib.request

    command = [sys.executable, "-m", "archcost.compiler.cli", "serve", "--no-browser", "--port", "0"]
    missing = subprocess.run([*command, str(tmp_path / "none.arch")], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "error[E101]: cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        while line and "archcost serve: http" not in line:
            line = server.stderr.readline()
        address = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert address and address.group(1) != "0", line
        with urllib.request.urlopen(address.group(0), timeout=60) as page:
            assert page.status == 200 and "archcost playground" in page.read().decode()
    finally:
        server.terminate()
        server.wait(30)
