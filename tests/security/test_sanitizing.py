"""Nothing a step file or a learner writes runs in the browser: narratives are Markdown without
raw HTML, sanitised by nh3; titles, labels, help, check messages and learner text (email, design
name) are escaped. Tested with script payloads in a course folder of our own."""

from __future__ import annotations

import json

import yaml
from bs4 import BeautifulSoup

from tests.factories import write
from tests.web.html import csrf_of, soup

DANGEROUS_TAGS = {"script", "iframe", "object", "embed", "style", "foreignobject", "form", "base"}
"""Never from content (the app's own forms post to its own paths; its diagram is inline SVG,
checked like any element: no handlers, no script URLs)."""
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "poster", "srcdoc"}

NARRATIVE_PAYLOADS = """\
The consumer commits its offset.

<script>alert("raw-script")</script>

<img src=x onerror=alert("img-onerror")>

<a href="javascript:alert('raw-link')">raw link</a>

[markdown link](javascript:alert('md-link'))

[entity link](jav&#x09;ascript:alert('entity-link'))

[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)

![image](javascript:alert('md-image'))

<javascript:alert('autolink')>

<iframe src="https://evil.example"></iframe>

<svg onload=alert("svg")></svg>

<style>body { display: none }</style>

| a | b |
|---|---|
| <b onmouseover=alert("cell")>x</b> | y |

## Commit order

Commit after the work is done.
"""

SCRIPT = '<script>alert("yaml")</script>'


def assert_script_is_inert(script, where: str) -> None:
    """A <script> is the page's own file, or a JSON data island (charts) that parses and cannot
    close its element early."""
    if script.get("type") == "application/json":
        text = script.string or ""
        json.loads(text)
        assert "</" not in text and "<!--" not in text, f"{where}: JSON island can break out"
        return
    assert script.get("src", "").startswith("/static/") and not script.string, (
        f"{where}: inline script {script}"
    )


def assert_no_active_content(html: str, where: str) -> None:
    """No dangerous element, no event handler attribute, no script URL (``data:,``, the empty
    favicon, aside), and every <script> inert or the app's own file."""
    page = BeautifulSoup(html, "html.parser")
    for element in page.find_all(True):
        name = element.name.lower()
        if name == "script":
            assert_script_is_inert(element, where)
            continue
        assert name not in DANGEROUS_TAGS - {"form"} or (
            name == "form" and element.get("action", "/").startswith("/")
        ), f"{where}: <{name}> {element}"
        for attribute, value in element.attrs.items():
            assert not attribute.lower().startswith("on"), f"{where}: {attribute} on <{name}>"
            if attribute.lower() in URL_ATTRIBUTES:
                url = "".join(str(value).split()).lower()
                script_url = url.startswith(("javascript:", "data:", "vbscript:"))
                assert url == "data:," or not script_url, f"{where}: {attribute}={value!r}"


def hostile_course(course_dir):
    """The fixture course with payloads in the narrative and in every text field of step 1."""
    write(course_dir / "01-commit-order" / "narrative.md", NARRATIVE_PAYLOADS)
    step_file = course_dir / "01-commit-order" / "step.yaml"
    step = yaml.safe_load(step_file.read_text())
    step["title"] = f"Commit {SCRIPT}"
    step["summary"] = f"Summary {SCRIPT}"
    for decision in step["decisions"]:
        decision["label"] = f"{decision['label']} {SCRIPT}"
        decision["help"] = f"<img src=x onerror=alert(1)> {SCRIPT}"
    for choice in step["decisions"][2]["choices"]:
        choice["label"] = f"{choice['label']} {SCRIPT}"
    check = step["checks"][0]
    check["title"] = f"No loss {SCRIPT}"
    check["pass"] = check["fail"] = f"<a href='javascript:alert(2)'>x</a> {SCRIPT}"
    check["explain"] = "{{ metrics.lost }} lost " + SCRIPT
    step_file.write_text(yaml.safe_dump(step, sort_keys=False))
    return course_dir


def test_payloads_in_a_step_never_become_active_content(make_client, course_dir):
    client = make_client(steps_dir=hostile_course(course_dir))
    page = client.get("/steps/commit-order")
    assert page.status_code == 200
    assert_no_active_content(page.text, "step page")
    narrative = soup(page).select_one("article.narrative")
    assert narrative.select_one("h2#commit-order").get_text() == "Commit order"
    assert narrative.select_one("table") is not None
    assert "raw-script" in narrative.get_text()  # shown as text, not run
    assert narrative.find_all(["script", "svg", "iframe", "style", "img"]) == []
    assert_no_active_content(client.get("/").text, "overview")


def test_payloads_in_check_messages_are_escaped_in_results(make_client, course_dir):
    client = make_client(steps_dir=hostile_course(course_dir))
    page = soup(client.get("/steps/commit-order"))
    form = {"csrf_token": csrf_of(page), "design_version": "0", "delivery.commit": "auto"}
    response = client.post("/steps/commit-order/run", data=form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "lost" in response.text
    assert_no_active_content(response.text, "results")
    assert_no_active_content(client.get("/steps/commit-order").text, "step page after a run")


def test_a_learners_email_and_design_name_are_escaped(client):
    token = csrf_of(soup(client.get("/signup")))
    email = '"><script>alert("email")</script>@example.com'
    signed_up = client.post(
        "/signup", data={"csrf_token": token, "email": email, "password": "a long password"}
    )
    assert signed_up.status_code == 422  # not an address: the form shows it again, inert
    assert_no_active_content(signed_up.text, "sign-up form with the email")
    overview = client.get("/")
    assert_no_active_content(overview.text, "overview")

    design = "version: 1\nname: '<img src=x onerror=alert(\"name\")><script>x()</script>'\n"
    token = csrf_of(soup(client.get("/report")))
    uploaded = client.post(
        "/design",
        data={"csrf_token": token},
        files={"design": ("design.yaml", design.encode())},
    )
    assert uploaded.status_code in (200, 303)
    report = client.get("/report")
    assert_no_active_content(report.text, "report card")
    assert "onerror" not in str(soup(report).find_all(attrs={"onerror": True}))
