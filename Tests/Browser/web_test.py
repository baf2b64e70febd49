#!/usr/bin/python3
"""ptkd's web interface in a real browser: headless Chromium through WebDriver (Debian's
chromium, chromium-driver and python3-selenium).

Run by Tests/EndToEndTests/WebBrowserTests.swift against a real ptkd that already holds photos
(one named <img src=x onerror=alert(1)>.png from a sender whose name carries a script, with a
note carrying one). Every check that fails prints why and makes the exit status 1.

  web_test.py --base https://127.0.0.1:PORT --link LINK --second-link LINK2 --dir PHOTOS
              --ptk 'PTK ARGS...' --shots DIR --upload A.png B.jpg C.png --hostile NAME
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

p = argparse.ArgumentParser()
p.add_argument('--base', required=True)
p.add_argument('--link', required=True)
p.add_argument('--dir', required=True)
p.add_argument('--ptk', required=True, help='the ptk command with its directory options')
p.add_argument('--shots', required=True)
p.add_argument('--upload', nargs=3, required=True)
p.add_argument('--hostile', required=True, help='the stored name of the photo whose name is markup')
opts = p.parse_args()

failures = []


def check(ok, what):
    print(('ok   ' if ok else 'FAIL ') + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def browser():
    o = webdriver.ChromeOptions()
    o.binary_location = '/usr/bin/chromium'
    for a in ['--headless=new', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--window-size=1280,800',
              '--no-first-run', '--disable-extensions', '--disable-background-networking']:
        o.add_argument(a)
    # The certificate is self-signed: a person compares its fingerprint once; the test accepts it.
    o.accept_insecure_certs = True
    d = webdriver.Chrome(service=Service('/usr/bin/chromedriver'), options=o)
    d.set_page_load_timeout(30)
    return d


def ptk(*words):
    r = subprocess.run(shlex.split(opts.ptk) + list(words), capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


def listed():
    code, out, err = ptk('list', '--json')
    return {e['Name']: e for e in json.loads(out)} if code == 0 else {}


def no_dialog(d, where):
    try:
        text = d.switch_to.alert.text
        d.switch_to.alert.dismiss()
        return check(False, f'no script ran on {where} (a dialog opened: {text!r})')
    except NoAlertPresentException:
        return check(d.execute_script('return window.__ptk_xss === undefined'), f'no script ran on {where}')


def phone(d):
    d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {'width': 390, 'height': 844, 'deviceScaleFactor': 2, 'mobile': True})


def desktop(d):
    d.execute_cdp_cmd('Emulation.clearDeviceMetricsOverride', {})
    d.set_window_size(1280, 800)


def wait(d, condition, seconds=20):
    try:
        # A page being replaced (after a form) makes elements stale for a moment: look again.
        WebDriverWait(d, seconds, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(lambda _: condition())
        return True
    except TimeoutException:
        return False


def thumbnails_loaded(d):
    """Scrolls to the end (thumbnails load lazily) and returns (images, those with naturalWidth > 0)."""
    d.execute_script('window.scrollTo(0, document.body.scrollHeight)')
    wait(d, lambda: d.execute_script(
        'return [...document.querySelectorAll("figure img")].every(i => i.complete)'), 15)
    return d.execute_script(
        'const i = [...document.querySelectorAll("figure img")]; return [i.length, i.filter(x => x.naturalWidth > 0).length]')


os.makedirs(opts.shots, exist_ok=True)
d = browser()
try:
    # Logging in with the one-time link: the gallery opens, the cookie is HttpOnly (not in document.cookie).
    d.get(opts.link)
    check(d.current_url.rstrip('/') == opts.base.rstrip('/'), f'the link leads to the gallery ({d.current_url})')
    check(d.find_elements(By.ID, 'count') != [], 'the gallery is shown after the link')
    check(d.execute_script('return document.cookie') == '', 'the session cookie is HttpOnly')
    no_dialog(d, 'the gallery')

    before = listed()
    images, loaded = thumbnails_loaded(d)
    check(images == len(before) and loaded == images, f'the gallery shows every thumbnail ({loaded} of {images} loaded, {len(before)} photos)')

    # Hostile names, notes and senders stay text.
    body = d.find_element(By.TAG_NAME, 'body').text
    check(opts.hostile in body, f'the name {opts.hostile!r} is shown as text')
    hostile_id = before[opts.hostile]['ID']
    d.get(f'{opts.base}/photo/{hostile_id}')
    no_dialog(d, "the hostile photo's page")
    text = d.find_element(By.TAG_NAME, 'body').text
    check('<script>' in text, 'the note and the sender carrying <script> are shown as text')
    check(d.execute_script('return document.querySelectorAll("main script, main img[src=x]").length') == 0,
          'no element was made from the hostile text')

    # Upload three photos through the file input: byte-identical in the directory.
    d.get(f'{opts.base}/upload')
    d.find_element(By.ID, 'files').send_keys('\n'.join(os.path.abspath(f) for f in opts.upload))
    ok = wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, '#queue li.saved')) == 3, 60)
    statuses = [e.text for e in d.find_elements(By.CSS_SELECTOR, '#queue li')]
    check(ok, f'three uploads end saved ({statuses})')
    for f in opts.upload:
        data = open(f, 'rb').read()
        name = os.path.basename(f)
        # A JPEG named .png is saved as .jpg: the page sends the type its bytes say.
        if data.startswith(b'\xff\xd8\xff') and name.endswith('.png'):
            name = name[:-4] + '.jpg'
        path = os.path.join(opts.dir, name)
        same = os.path.exists(path) and open(path, 'rb').read() == data
        check(same, f'{os.path.basename(f)} is in the directory byte for byte ({path})')
    after = listed()
    up = os.path.basename(opts.upload[0])
    check(up in after and after[up].get('SenderName') == 'web: browser-test', f"{up} is listed from 'web: browser-test'")
    phone(d)
    d.save_screenshot(os.path.join(opts.shots, 'upload-390x844.png'))
    desktop(d)

    # A refused upload says why (a text file named .png is not a PNG).
    bad = os.path.join(opts.shots, 'not-a-photo.png')
    open(bad, 'w').write('this is not a PNG\n')
    d.get(f'{opts.base}/upload')
    d.find_element(By.ID, 'files').send_keys(bad)
    ok = wait(d, lambda: len(d.find_elements(By.CSS_SELECTOR, '#queue li.refused')) == 1, 30)
    message = d.find_element(By.CSS_SELECTOR, '#queue li').text if ok else ''
    check(ok and 'refused' in message and 'PNG' in message, f'a broken upload is refused with a clear message ({message!r})')

    # Rename, note, rate and delete through the photo page: `ptk list` agrees.
    photo_id = after[up]['ID']
    d.get(f'{opts.base}/photo/{photo_id}')
    field = d.find_element(By.CSS_SELECTOR, 'form[action$="/rename"] input[name=name]')
    field.clear()
    new_name = 'renamed in the browser.png'
    field.send_keys(new_name)
    d.find_element(By.CSS_SELECTOR, 'form[action$="/rename"] button').click()
    if not check(wait(d, lambda: d.find_element(By.ID, 'name').text == new_name, 10), 'the photo page shows the new name'):
        print(d.current_url, d.find_element(By.TAG_NAME, 'body').text[:500])
        sys.exit(1)
    d.find_element(By.CSS_SELECTOR, 'form[action$="/note"] textarea').send_keys('from the beach, 2024')
    d.find_element(By.CSS_SELECTOR, 'form[action$="/note"] button').click()
    wait(d, lambda: 'from the beach, 2024' in d.find_element(By.CSS_SELECTOR, 'form[action$="/note"] textarea').get_attribute('value'), 10)
    Select(d.find_element(By.CSS_SELECTOR, 'form[action$="/rate"] select')).select_by_value('4')
    d.find_element(By.CSS_SELECTOR, 'form[action$="/rate"] button').click()
    wait(d, lambda: Select(d.find_element(By.CSS_SELECTOR, 'form[action$="/rate"] select')).first_selected_option.get_attribute('value') == '4', 10)
    entry = listed().get(new_name, {})
    check(entry.get('Note') == 'from the beach, 2024' and entry.get('Rating') == 4 and up not in listed(),
          f'ptk list shows the rename, note and rating ({ {k: entry.get(k) for k in ("Name", "Note", "Rating")} })')
    phone(d)
    d.save_screenshot(os.path.join(opts.shots, 'photo-390x844.png'))
    desktop(d)

    # A change without its CSRF token is refused (403) and changes nothing.
    status = d.execute_script(f'''
        const r = await fetch("/photo/{photo_id}/note", {{method: "POST", body: new URLSearchParams({{note: "forged"}})}});
        return r.status;''')
    check(status == 403, f'a change without its CSRF token gets 403 (got {status})')
    check(listed().get(new_name, {}).get('Note') == 'from the beach, 2024', 'the refused change changed nothing')

    d.find_element(By.ID, 'delete').click()
    d.find_element(By.ID, 'confirm').click()
    wait(d, lambda: d.find_elements(By.ID, 'count') != [], 10)
    check(new_name not in listed() and not os.path.exists(os.path.join(opts.dir, new_name)), 'delete (after the confirmation) removes the photo')

    # Screenshots of the gallery on a phone and a desktop.
    d.get(opts.base + '/')
    phone(d)
    d.get(opts.base + '/')
    thumbnails_loaded(d)
    d.execute_script('window.scrollTo(0, 0)')
    time.sleep(0.3)
    d.save_screenshot(os.path.join(opts.shots, 'gallery-390x844.png'))
    width = d.execute_script('return document.documentElement.scrollWidth')
    check(width <= 390, f'the gallery fits a 390 px screen (scroll width {width})')
    desktop(d)
    d.get(opts.base + '/')
    thumbnails_loaded(d)
    d.execute_script('window.scrollTo(0, 0)')
    d.save_screenshot(os.path.join(opts.shots, 'gallery-1280x800.png'))
    urls = [f'{opts.base}/', f'{opts.base}/upload', f'{opts.base}/photo/{hostile_id}', f'{opts.base}/photo/{hostile_id}/original',
            f'{opts.base}/photo/{hostile_id}/thumbnail', f'{opts.base}/photo/{hostile_id}/package', f'{opts.base}/photo/{hostile_id}/delete',
            f'{opts.base}/nothing-here']
finally:
    d.quit()

# A second browser without the cookie gets the login page for every URL.
e = browser()
try:
    for url in urls:
        e.get(url)
        shown = e.find_elements(By.CSS_SELECTOR, 'h1') and e.find_element(By.CSS_SELECTOR, 'h1').text == 'Log in'
        check(shown and not e.find_elements(By.CSS_SELECTOR, 'figure'), f'without the cookie, {url[len(opts.base):]} shows the login page')
    # The link was used once: it does not work again.
    e.get(opts.link)
    check('used already' in e.find_element(By.TAG_NAME, 'body').text, 'the one-time link does not work a second time')
    phone(e)
    e.get(opts.base + '/')
    e.save_screenshot(os.path.join(opts.shots, 'login-390x844.png'))
finally:
    e.quit()

print(f'{len(failures)} failure(s)' if failures else 'all browser checks passed')
sys.exit(1 if failures else 0)
