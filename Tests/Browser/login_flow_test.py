#!/usr/bin/python3
"""A phone app's login flow (login flow v2) with the person's side in a real browser: headless
Chromium through WebDriver (Debian's chromium, chromium-driver and python3-selenium).

Run by Tests/EndToEndTests/LoginFlowBrowserTests.swift against a real ptkd with a web password.
The app's side (starting the flow, polling) is Python's http.client, as the app would send it;
the browser opens the flow's address without a session, logs in with the password, comes back
to the flow, approves it; a second flow, opened with the session, is denied. Every check that
fails prints why and makes the exit status 1.

  login_flow_test.py --port PORT --cafile CERT --password PASSWORD --shots DIR
"""
import argparse
import http.client
import json
import os
import ssl
import urllib.parse

from browser_common import check, chromium, console_errors, finish, stopped

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

p = argparse.ArgumentParser()
p.add_argument('--port', type=int, required=True)
p.add_argument('--cafile', required=True)
p.add_argument('--password', required=True)
p.add_argument('--shots', required=True)
opts = p.parse_args()

UA = 'Mozilla/5.0 (Android) Nextcloud-android/3.30.0'
ctx = ssl.create_default_context(cafile=opts.cafile)
def heading(d):
    return d.find_element(By.TAG_NAME, 'h1').text


def leaves(d, title, seconds=30):
    """Waits until the page's heading is no longer `title` (a form was sent). The page being
    replaced makes the old heading stale for a moment, or absent: both mean look again."""
    try:
        WebDriverWait(d, seconds, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(
            lambda d: heading(d) != title)
        return True
    except TimeoutException:
        return check(False, 'the page left "%s" within %d s' % (title, seconds))


def app(path, body=b''):
    c = http.client.HTTPSConnection('127.0.0.1', opts.port, context=ctx, timeout=20)
    c.request('POST', path, body=body, headers={'User-Agent': UA, 'Content-Type': 'application/x-www-form-urlencoded'})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def start():
    status, data = app('/index.php/login/v2')
    check(status == 200, 'the app starts a flow: %d' % status)
    answer = json.loads(data)
    return answer['poll']['token'], answer['login']


def poll(token):
    return app('/index.php/login/v2/poll', b'token=' + token.encode())


d = chromium('390,844')
try:
    token, login = start()
    check(poll(token)[0] == 404, 'the poll is 404 while the flow waits')

    # The browser the app opens has no session: the login page, which comes back to the flow.
    d.get(login)
    check(heading(d) == 'Log in', 'the flow without a session shows the login page')
    d.save_screenshot(os.path.join(opts.shots, 'flow-login-390x844.png'))
    d.find_element(By.NAME, 'name').send_keys("Anna's phone")
    d.find_element(By.NAME, 'password').send_keys(opts.password)
    d.find_element(By.CSS_SELECTOR, 'form.login button').click()
    leaves(d, 'Log in')
    check(urllib.parse.urlparse(d.current_url).path == urllib.parse.urlparse(login).path,
          'after logging in the browser is back at the flow: %s' % d.current_url)
    check(heading(d) == 'A device asks to send photos', 'the flow page')
    check(d.find_element(By.ID, 'device').text == UA, 'it names the device: %s' % d.find_element(By.ID, 'device').text)
    check('127.0.0.1' in d.find_element(By.ID, 'address').text, 'and the address it came from')
    d.save_screenshot(os.path.join(opts.shots, 'flow-approve-390x844.png'))
    name = d.find_element(By.NAME, 'name')
    check(name.get_attribute('value') == 'Nextcloud-android', 'the suggested name: %s' % name.get_attribute('value'))
    name.clear()
    name.send_keys('annas-phone')
    d.find_element(By.ID, 'approve').click()
    leaves(d, 'A device asks to send photos')
    check(heading(d) == 'Approved', 'approved: %s' % heading(d))
    approved_page = d.page_source
    status, data = poll(token)
    check(status == 200, 'the app collects its password: %d' % status)
    credentials = json.loads(data) if status == 200 else {}
    check(credentials.get('loginName') == 'annas-phone', 'named as approved: %s' % credentials.get('loginName'))
    check(credentials.get('server') == 'https://127.0.0.1:%d' % opts.port, 'the server: %s' % credentials.get('server'))
    check(credentials.get('appPassword', '') not in approved_page, 'the password is not on the page')
    check(poll(token)[0] == 404, 'a second poll is 404')

    # A second flow, opened with the session: straight to its page; denied.
    token2, login2 = start()
    d.get(login2)
    check(heading(d) == 'A device asks to send photos', 'with a session, the flow page at once')
    d.find_element(By.ID, 'deny').click()
    leaves(d, 'A device asks to send photos')
    check(heading(d) == 'Denied', 'denied')
    check(poll(token2)[0] == 404, 'the denied flow polls 404')
    d.get(login2)
    check(heading(d) == 'This login has ended', 'its page says it ended')
    # Network errors are the answers above (401 without a session, 404 for an ended flow).
    errors = console_errors(d)
    check(not errors, 'no script errors or refused content in the console: %s' % errors)
except Exception as e:
    stopped(d, e, opts.shots, 'flow-failed-390x844.png')
    raise
finally:
    d.quit()

finish()
