"""``ragloom serve``: the HTTP API through a real client against a server in a subprocess.

One server (with a bearer token) serves the module; the tests compare its JSON with the
command line's, check the limits and the token, re-ingest the index while it searches, and
drive the page in headless Chromium where Chromium, its driver and selenium are installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="ragloom[serve] (FastAPI, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="ragloom[serve] (FastAPI, uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")
pytest.importorskip("ragloom_lancedb", reason="ragloom-lancedb is not installed")
pytest.importorskip("ragloom_rules", reason="ragloom-rules is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from sample_index import SAMPLE_DOCS, build_sample_index, sample_docs_of  # noqa: E402

pytestmark = pytest.mark.xdist_group("serve")

TOKEN = "s3cret-token"
QUESTION = "How do I clear the cache and how do I write a plugin?"


class Server:
    def __init__(self, process: subprocess.Popen[str], url: str, started: str) -> None:
        self.process = process
        self.url = url.replace("//0.0.0.0:", "//127.0.0.1:")  # only ever talk to loopback
        self.started = started
        self.client = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )

    def stop(self) -> tuple[int, str]:
        self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, err = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, self.started + err


def start_server(index: Path, *args: str, token: str | None = TOKEN) -> Server:
    """``ragloom serve`` on an ephemeral port; returns once it printed its address (it is
    listening from then on: requests wait in the socket's backlog until it serves)."""
    env = {**os.environ, "RAGLOOM_DISABLE_PLUGINS": "ragloom-docling"}
    env.pop("RAGLOOM_SERVE_TOKEN", None)
    if token is not None:
        env["RAGLOOM_SERVE_TOKEN"] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "ragloom.cli", "serve", "--index", str(index), "--port", "0",
         *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("ragloom serve: http://"):
            url = line.split()[2]
            return Server(process, url, "".join(seen))
    process.wait()
    raise AssertionError(f"the server did not start: {''.join(seen)}")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_sample_index(tmp_path_factory.mktemp("serve") / "index")


@pytest.fixture(scope="module")
def server(index: Path) -> Iterator[Server]:
    running = start_server(index)
    yield running
    running.stop()


def cli_json(*args: str) -> list[dict[str, Any]]:
    env = {**os.environ, "RAGLOOM_DISABLE_PLUGINS": "ragloom-docling"}
    done = subprocess.run(
        [sys.executable, "-m", "ragloom.cli", *args, "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_search_and_plan_answer_with_the_json_of_the_command_line(server, index) -> None:
    [expected] = cli_json("search", QUESTION, "--index", str(index))
    by_get = server.client.get("/search", params={"q": QUESTION})
    assert by_get.status_code == 200, by_get.text
    assert by_get.json() == expected
    by_post = server.client.post("/search", json={"question": QUESTION})
    assert by_post.json() == expected
    assert len(expected["sub_queries"]) == 2 and expected["passages"]
    fewer = server.client.post("/search", json={"question": QUESTION, "k": 2}).json()
    assert len(fewer["passages"]) == 2
    assert [p["chunk_id"] for p in fewer["passages"]] != []
    plan = server.client.post("/plan", json={"question": QUESTION}).json()
    assert plan == {  # the plan the search made (`ragloom plan --json` prints the same)
        "query": QUESTION, "sub_queries": expected["sub_queries"],
        "routing_plan": expected["routing_plan"],
    }


def test_ask_answers_with_the_json_of_the_command_line_and_exact_spans(server, index) -> None:
    [expected] = cli_json("ask", QUESTION, "--index", str(index))
    answered = server.client.post("/ask", json={"question": QUESTION})
    assert answered.status_code == 200, answered.text
    assert answered.json() == expected
    assert expected["citations"] and expected["found"]
    for citation in expected["citations"]:  # each quote is its document's text at its span
        text = server.client.get(f"/documents/{citation['document_id']}").json()["text"]
        assert text[citation["start"]:citation["end"]] == citation["quote"]
    blank = server.client.post("/ask", json={"question": "   "})
    assert blank.status_code == 422 and "blank" in blank.json()["error"]


def test_a_document_is_its_chunks_text_at_their_offsets(server) -> None:
    answer = server.client.get("/search", params={"q": "How do I clear the cache?"}).json()
    passage = answer["passages"][0]
    found = server.client.get(f"/documents/{passage['document_id']}")
    assert found.status_code == 200, found.text
    doc = found.json()
    assert doc["document_id"] == passage["document_id"]
    assert doc["text"][passage["start"]:passage["end"]] == passage["content"]
    ids = [c["chunk_id"] for c in doc["chunks"]]
    assert passage["chunk_id"] in ids
    source = (SAMPLE_DOCS / passage["document_id"]).read_text(encoding="utf-8")
    for chunk in doc["chunks"]:
        if chunk["start"] is not None:
            assert doc["text"][chunk["start"]:chunk["end"]] == source[chunk["start"]:chunk["end"]]


def test_the_token_is_required_except_for_health_and_the_page(server) -> None:
    anonymous = httpx.Client(base_url=server.url, timeout=30)
    try:
        for response in (
            anonymous.get("/search", params={"q": QUESTION}),
            anonymous.post("/plan", json={"question": QUESTION}),
            anonymous.post("/ask", json={"question": QUESTION}),
            anonymous.get("/documents/guides/caching.md"),
            anonymous.get("/search", params={"q": QUESTION},
                          headers={"Authorization": "Bearer wrong"}),
            anonymous.get("/search", params={"q": QUESTION},
                          headers={"Authorization": TOKEN}),  # no scheme
        ):
            assert response.status_code == 401
            assert "bearer token" in response.json()["error"]
            assert response.headers["www-authenticate"] == "Bearer"
        assert anonymous.get("/health").json()["status"] == "ok"
        page = anonymous.get("/")
        assert page.status_code == 200 and "<form" in page.text
        assert "http" not in page.text.replace("http-equiv", "")  # nothing from a CDN
        assert anonymous.get("/openapi.json").json()["paths"]["/search"]
        # the API's documentation pages load their script and style from the server itself
        for docs, asset in (("/docs", "swagger-ui-bundle.js"), ("/redoc", "redoc.standalone.js")):
            html = anonymous.get(docs).text
            assert "cdn." not in html and "googleapis" not in html
            url = next(u for u in re.findall(r'src="([^"]+)"', html) if u.endswith(asset))
            assert url.startswith("/") and anonymous.get(url).status_code == 200
    finally:
        anonymous.close()


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "says"),
    [
        ("post", "/search", {"content": b'{"question": "' + b"x" * 20000 + b'"}',
                             "headers": {"content-type": "application/json"}}, 413, "over"),
        ("get", "/search", {"params": {"q": "word " * 500}}, 422, "limit is 2000"),
        ("get", "/search", {"params": {"q": "  "}}, 422, "blank"),
        ("get", "/search", {"params": {"q": QUESTION, "k": 0}}, 422, "between 1 and 50"),
        ("get", "/search", {"params": {"q": QUESTION, "k": 51}}, 422, "between 1 and 50"),
        ("get", "/search", {"params": {"q": QUESTION, "k": "many"}}, 422, "k:"),
        ("get", "/search", {}, 422, "q:"),
        ("post", "/search", {"json": {"question": QUESTION, "path": "/etc"}}, 422, "path"),
        ("post", "/search", {"content": b"{not json",
                             "headers": {"content-type": "application/json"}}, 422, "JSON"),
        ("post", "/plan", {"json": {"question": 5}}, 422, "question"),
        ("get", "/documents/../../etc/passwd", {}, 404, "Not Found"),  # the client resolves ..
        ("get", "/documents/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", {}, 404, "no document"),
        ("get", "/nowhere", {}, 404, "Not Found"),
        ("delete", "/search", {}, 405, "Method Not Allowed"),
    ],
)
def test_bad_requests_get_a_json_error_and_no_traceback(
    server, method, path, kwargs, status, says
) -> None:
    response = getattr(server.client, method)(path, **kwargs)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert says in response.json()["error"]
    assert "Traceback" not in response.text


def test_a_reingest_is_searched_without_a_restart_and_never_half_written(
    server, index, tmp_path
) -> None:
    from ragloom.ingest import ingest
    from ragloom_lancedb import LanceDBStore

    question = "How do I feed the zebrafinch?"
    before = server.client.get("/search", params={"q": question}).json()
    assert all("zebrafinch" not in p["content"] for p in before["passages"])
    docs = sample_docs_of(index)  # the index's root
    (docs / "guides" / "birds.md").write_text(
        "# Birds\n\nFeed the zebrafinch seeds every morning; the zebrafinch likes millet.\n",
        encoding="utf-8",
    )
    stop = threading.Event()
    seen: list[tuple[int, bool]] = []

    def keep_searching() -> None:
        with httpx.Client(base_url=server.url, timeout=60,
                          headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            while not stop.is_set():
                response = client.get("/search", params={"q": question})
                passages = response.json().get("passages", []) if response.is_success else []
                found = any("zebrafinch" in p["content"] for p in passages)
                seen.append((response.status_code, found))

    searching = threading.Thread(target=keep_searching)
    searching.start()
    try:
        while not seen and searching.is_alive():  # a search went through before the ingest
            searching.join(0.05)
        store = LanceDBStore(index)
        report = ingest([docs], store=store, cache=False)
        store.close()
        assert report.ok
    finally:
        stop.set()
        searching.join()
    assert seen and all(status == 200 for status, _ in seen)
    # once the new document was seen, it stayed (no search went back to an older version)
    first = next((n for n, (_, found) in enumerate(seen) if found), len(seen))
    assert all(found for _, found in seen[first:])
    after = server.client.get("/search", params={"q": question}).json()
    assert any("zebrafinch" in p["content"] for p in after["passages"])
    doc = server.client.get("/documents/guides/birds.md")
    assert doc.status_code == 200 and "zebrafinch" in doc.json()["text"]


def test_sigterm_stops_the_server_after_the_request_under_way(index) -> None:
    # listening beyond loopback (the client still talks to 127.0.0.1) is warned about
    running = start_server(index, "--host", "0.0.0.0", "--mode", "text", token=None)
    assert running.client.get("/health").json()["status"] == "ok"
    answer = running.client.get("/search", params={"q": "How do I clear the cache?"})
    assert answer.status_code == 200 and answer.json()["passages"]
    status, err = running.stop()
    assert status == 143, err
    assert "ragloom: terminated; the server stopped" in err
    assert "Traceback" not in err
    assert "warning: listening on 0.0.0.0, reachable from other machines" in err
    assert "set --token" in err


def _chromium() -> tuple[str, str] | None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return None
    return browser, driver


@pytest.mark.skipif(_chromium() is None,
                    reason="Chromium and its driver are not installed (Debian: chromium, "
                    "chromium-driver)")
def test_the_page_searches_and_opens_a_document_in_headless_chromium(server, tmp_path) -> None:
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser, driver_path = _chromium()  # type: ignore[misc]
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=420,900"):  # a phone-sized window
        options.add_argument(flag)
    driver = webdriver.Chrome(
        options=options, service=webdriver.ChromeService(executable_path=driver_path)
    )
    try:
        wait = WebDriverWait(driver, 60)
        driver.get(server.url)
        box = driver.switch_to.active_element  # the page focuses the search box
        assert box.get_attribute("id") == "q"
        box.send_keys(QUESTION, Keys.ENTER)
        # the server wants a token: the page asks for it, then searches with it
        wait.until(lambda d: d.find_element(By.ID, "tok").is_displayed())
        assert "bearer token" in driver.find_element(By.ID, "status").text
        assert driver.switch_to.active_element.get_attribute("id") == "tok"
        driver.switch_to.active_element.send_keys(TOKEN, Keys.ENTER)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "li.passage"))
        plan = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "#plan tbody tr")]
        assert len(plan) == 2 and "How do I clear the cache?" in plan[0]
        marks = {m.text.lower() for m in driver.find_elements(By.CSS_SELECTOR, "li.passage mark")}
        assert any(m.startswith(("cache", "plugin")) for m in marks), marks
        scroll, client = driver.execute_script(
            "const e = document.documentElement; return [e.scrollWidth, e.clientWidth]"
        )
        assert scroll <= client  # nothing wider than the phone
        driver.save_screenshot(str(tmp_path / "search.png"))
        first = driver.find_element(By.CSS_SELECTOR, "li.passage button.source")
        chunk_id = first.get_attribute("data-chunk")
        first.send_keys(Keys.ENTER)  # by keyboard
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#doc.shown .chunk.current"))
        current = driver.find_element(By.CSS_SELECTOR, ".chunk.current")
        assert chunk_id in current.find_element(By.TAG_NAME, "h3").text
        assert driver.switch_to.active_element == current
        driver.save_screenshot(str(tmp_path / "document.png"))
        shots = os.environ.get("RAGLOOM_SCREENSHOTS")
        if shots:
            for name in ("search.png", "document.png"):
                shutil.copy(tmp_path / name, Path(shots) / name)
        current.send_keys(Keys.ESCAPE)
        wait.until(lambda d: d.find_element(By.ID, "results").is_displayed())
    finally:
        driver.quit()



def test_a_reranker_named_on_the_command_line_reranks_what_it_serves(
    index, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragloom
    import uvicorn
    from fastapi.testclient import TestClient
    from ragloom.cli import main

    served: list[Any] = []

    def run(self: uvicorn.Server, sockets: Any = None) -> None:  # one request, in process
        with TestClient(self.config.app) as client:
            served.append(client.post("/search", json={"question": QUESTION}).json())

    monkeypatch.setattr(uvicorn.Server, "run", run)
    monkeypatch.delenv("RAGLOOM_SERVE_TOKEN", raising=False)
    args = ["--mode", "text", "--rerank", "mmr", "--rerank-option", "lambda_mult=0"]
    assert main(["serve", "--index", str(index), "--port", "0", *args]) == 0
    settings = {"mode": "text", "rerank": "mmr", "rerank_options": {"lambda_mult": 0}}
    with ragloom.Searcher(index=str(index), **settings) as searcher:
        expected = searcher.search(QUESTION).model_dump(mode="json")
    with ragloom.Searcher(index=str(index), mode="text") as searcher:
        fused = searcher.search(QUESTION).model_dump(mode="json")
    assert served == [expected]
    # lambda 0 picks for novelty alone: not the fused order
    assert [p["chunk_id"] for p in expected["passages"]] != [
        p["chunk_id"] for p in fused["passages"]
    ]
