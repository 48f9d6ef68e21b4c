#!/usr/bin/env python3
"""Checks a sweep's report.html in headless Chromium (standard library only).

Usage: .ci/report-browser.py CHROMIUM PAGE

1. The page as the browser built it (--dump-dom) holds the interactive
   charts, one per static chart, and its knee summary prints intervals
   (`2024 ± 114/s`), as the terminal does.
2. A hover reveals a value: the page is opened at PAGE#hover=0,0,2, whose
   test hook moves the mouse over point 2 of series 0 of chart 0 through the
   page's own mousemove handler; the tooltip must then be visible and hold
   that point's text (from the page's chart data) with its interval.
"""
import html
import json
import re
import subprocess
import sys


def dom(chromium, url):
    out = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,2400",
         "--virtual-time-budget=5000", "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True)
    return out.stdout


def main():
    chromium, page = sys.argv[1], sys.argv[2]
    source = open(page, encoding="utf-8").read()
    plots = [json.loads(html.unescape(m)) for m in
             re.findall(r'<script type="application/json" class="qsim-plot">(\{.*?)</script>', source, re.S)]
    assert plots, f"{page} holds no interactive chart data"
    built = dom(chromium, "file://" + page)
    charts = built.count('class="qsim-chart"')
    assert charts == len(plots), f"the browser drew {charts} interactive charts of {len(plots)}"
    summary = built[built.index('id="summary"'):built.index('id="charts"')]
    assert re.search(r"\d ± \d", summary), "the knee summary on the page shows no interval"

    hovered = dom(chromium, "file://" + page + "#hover=0,0,2")
    tip = re.search(r'<div class="qsim-tip" role="status" style="([^"]*)">([^<]*)</div>', hovered)
    assert tip, "no tooltip element after the hover"
    style, text = tip.group(1), html.unescape(tip.group(2))
    assert "visibility: visible" in style, f"the tooltip is not shown after the hover ({style})"
    want = plots[0]["series"][0]["points"][2]["text"]
    assert want in text, f"the tooltip says {text!r}, not point 2's {want!r}"
    assert "±" in text, f"the hovered value has no interval: {text!r}"
    print(f"report in Chromium: {charts} interactive charts; hover shows {text!r}")


main()
