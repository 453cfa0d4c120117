"""Benchmark helper (docs/performance.md, "Real time"): opens the dashboard at URL in headless
Chromium, presses Start and watches until the run ends or SECONDS pass. usage: watch.py URL SECONDS"""
import sys, time
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
o = webdriver.ChromeOptions(); o.binary_location = "/usr/bin/chromium"
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]: o.add_argument(a)
d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
d.get(sys.argv[1])
while not d.execute_script("return window.cosim && window.cosim.info !== null"): time.sleep(0.1)
d.find_element("id", "start").click()
end = time.time() + float(sys.argv[2])
while time.time() < end and d.find_element("id","status").text in ("running", "paused", "connecting"):
    time.sleep(0.5)
print("rows on page:", d.execute_script("return window.cosim.t.length"), "status:", d.find_element("id","status").text,
      "stats:", d.find_element("id","stats").text)
d.quit()
