"""Drives the cosim dashboard in headless Chromium (Debian's chromium + chromium-driver, with
selenium from PyPI): opens the page of a paused operator run, starts it, drags the spool slider
towards its right end and waits until the page's own plot data of mech.s rises, and the
schematic's boom turns; opens a second page (its slider must show the first one's value), and
measures the layout at 390x844 (a phone) and 1920x1080. Prints what it saw as JSON;
cosim-cli/tests/live.rs checks it against the run's results.csv.

usage: dashboard.py URL
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By


# How long a wait may take (s of wall time). Generous: on a loaded machine (CI beside other
# jobs) Chromium and the paced run fall behind; a wait that once had 15 s timed out there. A
# broken page still fails: a wait whose condition depends on the run fails as soon as the run
# has ended without it holding (`unless`), and every failure says what the page showed last.
DEADLINE = 120


def wait(driver, js, what, unless=None, show=None):
    """Polls `js` until it returns something truthy and returns that. Fails with a message when
    DEADLINE passes, or when `unless` (JS) returns something truthy first (the run ended); the
    message holds what `show` (JS) returns then."""
    t0 = time.time()
    while True:
        # `unless` first: a run that had ended before `js` is evaluated has delivered its last rows.
        stop = driver.execute_script(unless) if unless else None
        v = driver.execute_script(js)
        if v:
            return v
        if stop or time.time() - t0 > DEADLINE:
            why = f"the run ended ({stop}) first" if stop else f"timed out after {DEADLINE} s"
            seen = driver.execute_script(show) if show else None
            raise SystemExit(f"{why} waiting for {what}" + (f"; the page showed: {json.dumps(seen)}" if seen else ""))
        time.sleep(0.05)


# What the page shows of the run: its status, time and last values of the plotted columns.
SHOW = ("const c = window.cosim; if (!c) return 'no window.cosim'; const v = {};"
        " for (const k of Object.keys(c.values || {})) v[k] = c.values[k][c.values[k].length - 1];"
        " return {status: c.status, finished: c.finished || null, rows: (c.t || []).length,"
        " t: c.t && c.t.length ? c.t[c.t.length - 1] : null, last: v,"
        " message: (document.getElementById('message') || {}).textContent || ''};")
ENDED = "return window.cosim && window.cosim.finished ? window.cosim.finished : null;"


def main(url):
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]:
        opts.add_argument(a)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        driver.get(url)
        wait(driver, "return window.cosim && window.cosim.info !== null && "
             "document.getElementById('slider-hyd.U_ref') !== null", "the page to connect", show=SHOW)
        labels = driver.execute_script("return window.cosim.labels;")
        start_disabled_paused = driver.find_element(By.ID, "start").get_attribute("disabled") is not None
        driver.find_element(By.ID, "start").click()
        wait(driver, "return window.cosim.t.length > 100", "rows to arrive", ENDED, SHOW)
        wait(driver, "return window.cosim.status === 'running' && document.getElementById('start').disabled;",
             "Start to be disabled while running", ENDED, SHOW)
        boom = "const b = document.getElementById('boom'); return b ? b.getAttribute('transform') : null;"
        boom0 = wait(driver, boom, "the schematic", show=SHOW)
        last = "const c = window.cosim; return [c.t[c.t.length-1], c.values['mech.s'][c.values['mech.s'].length-1], " \
               "c.values['hyd.U_ref'][c.values['hyd.U_ref'].length-1]];"
        t0, s0, u0 = driver.execute_script(last)
        # A real drag: from the middle (0 V) to near the right end. On a loaded machine a drag can
        # be lost (the slider still at 0 V, nothing sent: seen once in CI); as an operator would,
        # drag again, at most five times, each given a second to show on the slider.
        value = 0.0
        for _ in range(5):
            slider = driver.find_element(By.ID, "slider-hyd.U_ref")
            ActionChains(driver).click_and_hold(slider).move_by_offset(int(slider.size["width"] * 0.45), 0) \
                .release().perform()
            moved = time.monotonic() + 1.0
            while time.monotonic() < moved:
                value = float(driver.find_element(By.ID, "slider-hyd.U_ref").get_attribute("value"))
                if value > 0:
                    break
                time.sleep(0.05)
            if value > 0:
                break
        if value <= 0:
            raise SystemExit(f"five drags left the U_ref slider at {value} V; the page showed: "
                             f"{json.dumps(driver.execute_script(SHOW))}")
        t_move = driver.execute_script(last)[0]
        # The page's plot data of s responds, and its U_ref column shows the value set.
        wait(driver, f"const c = window.cosim, s = c.values['mech.s'], u = c.values['hyd.U_ref']; "
             f"return s[s.length-1] > {s0} + 0.005 && Math.abs(u[u.length-1] - {value}) < 1e-9;",
             f"the plot of mech.s to rise above {s0} + 0.005 m with hyd.U_ref = {value} V", ENDED, SHOW)
        t1, s1, u1 = driver.execute_script(last)
        boom1 = driver.execute_script(boom)
        # A second page, opened later: its slider shows where the first one left it.
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(url)
        wait(driver, "return window.cosim && window.cosim.state !== null && "
             "document.getElementById('slider-hyd.U_ref') !== null", "the second page to connect", show=SHOW)
        second = float(driver.find_element(By.ID, "slider-hyd.U_ref").get_attribute("value"))
        history_s = driver.execute_script("const t = window.cosim.t; return t.length ? t[t.length-1] - t[0] : 0;")
        # A phone (390x844) and a 1080p screen.
        layout = ("const r = [...document.querySelectorAll('#plots canvas')].map(c => c.getBoundingClientRect());"
                  "return [Math.min(...r.map(x => x.height)), document.documentElement.scrollWidth,"
                  " Math.max(...r.map(x => x.bottom)), r.length];")
        sizes = {}
        for w, h in [(390, 844), (1920, 1080)]:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 500})
            time.sleep(0.5)
            sizes[f"{w}x{h}"] = driver.execute_script(layout)
        driver.close()
        driver.switch_to.window(first)
        drawn = driver.execute_script(
            "const g = document.getElementById('plot-mech.s').getContext('2d');"
            "const d = g.getImageData(0, 0, g.canvas.width, g.canvas.height).data;"
            "let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i+2] > 150 && d[i] < 100) n++; return n;")
        print(json.dumps({"slider": value, "t0": t0, "s0": s0, "u0": u0, "t_move": t_move,
                          "t1": t1, "s1": s1, "u1": u1, "plot_pixels": drawn, "labels": labels,
                          "start_disabled_paused": start_disabled_paused, "boom0": boom0, "boom1": boom1,
                          "second_slider": second, "history_s": history_s, "sizes": sizes}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main(sys.argv[1])
