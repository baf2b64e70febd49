"""What the WebDriver scripts share (web_test.py, login_flow_test.py, video_test.py, live_photo_test.py): the
checks and their failures, headless Chromium as Debian packages it, and how a script that
stops says so."""
import os
import sys

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

failures = []


def check(ok, what):
    """Prints the check ('ok' or 'FAIL'); a failure goes to standard error too (the Swift test
    shows it first) and makes the exit status 1."""
    print(('ok   ' if ok else 'FAIL ') + what, flush=True)
    if not ok:
        failures.append(what)
        print('FAIL ' + what, file=sys.stderr, flush=True)
    return ok


def chromium(window='1280,800', script=True, console=False, extra=(), load_timeout=60):
    """Headless Chromium at `window` ("W,H"), with script or without, keeping the console's
    messages when `console` (read with get_log('browser'))."""
    o = webdriver.ChromeOptions()
    o.binary_location = '/usr/bin/chromium'
    for a in ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--window-size=' + window,
              '--no-first-run', '--disable-extensions', '--disable-background-networking'] + list(extra):
        o.add_argument(a)
    if not script:
        o.add_argument('--blink-settings=scriptEnabled=false')
    # The certificate is self-signed: a person compares its fingerprint once; the test accepts it.
    o.accept_insecure_certs = True
    if console:
        o.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    d = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=o)
    d.set_page_load_timeout(load_timeout)
    return d


def wait(d, condition, what, seconds=30):
    """Waits until `condition(d)` holds (an element gone stale or not there yet counts as not
    yet); a check that fails, saying `what`, when it does not within `seconds`."""
    try:
        WebDriverWait(d, seconds, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(
            condition)
        return True
    except TimeoutException:
        return check(False, '%s within %d s' % (what, seconds))


def log_in(d, base, password, name):
    """Logs in at `base`/login with the web password as `name`, then waits for the gallery."""
    d.get(base + '/login')
    d.find_element(By.NAME, 'name').send_keys(name)
    d.find_element(By.NAME, 'password').send_keys(password)
    d.find_element(By.CSS_SELECTOR, 'form.login button').click()
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, '.grid figure'), 'the gallery after logging in')


def console_errors(d):
    """The console's errors other than the network's (answers such as 401 or 404 are the test's own)."""
    logs = d.get_log('browser') if hasattr(d, 'get_log') else []
    return [e for e in logs if e.get('level') == 'SEVERE' and e.get('source') != 'network']


def stopped(d, e, shots, shot):
    """A script stopped by an exception: said first on standard error, with where the browser
    was, and a screenshot `shot` in `shots`."""
    check(False, 'stopped at %s: %s at %s' % (type(e).__name__, str(e).splitlines()[0] if str(e) else '', d.current_url))
    d.save_screenshot(os.path.join(shots, shot))


def finish():
    """Prints the count of failures and exits 1 when there is one."""
    print('failures: %d' % len(failures))
    sys.exit(1 if failures else 0)
