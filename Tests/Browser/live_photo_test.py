#!/usr/bin/python3
"""A Live Photo in a real browser (issue 58): headless Chromium through WebDriver (Debian's
chromium, chromium-driver and python3-selenium).

Run by Tests/EndToEndTests/LivePhotoBrowserTests.swift against a real ptkd with a web password
that holds a Live Photo (an iPhone-like HEIC and an H.264 MOV with one content identifier: this
Chromium plays no HEVC), an HEVC one, and a plain photo. The gallery shows each Live Photo as one
item marked LIVE and never its video; the viewer plays the motion, muted, while the LIVE button
is hovered (readyState, currentTime advancing) and while the photo is pressed, and shows the still
again after; the HEVC one says this browser cannot play its video. Every check that fails prints
why and makes the exit status 1.

  live_photo_test.py --base https://127.0.0.1:PORT --password PASSWORD --still ID --motion ID
                     --hevc-still ID --hevc-motion ID --shots DIR
"""
import argparse
import os
import time

from browser_common import check, chromium, console_errors, finish, log_in, stopped, wait

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

p = argparse.ArgumentParser()
for name in ('still', 'motion', 'hevc-still', 'hevc-motion'):
    p.add_argument('--' + name, type=int, required=True)
p.add_argument('--base', required=True)
p.add_argument('--password', required=True)
p.add_argument('--shots', required=True)
opts = p.parse_args()



STATE = ('const v = document.getElementById("motion");'
         'return [v.readyState, v.currentTime, v.paused, v.hidden, v.videoWidth, v.error && v.error.code];')


def advancing(d, what):
    """The motion is shown and its time advances past 0.3 s with data at hand."""
    ok = wait(d, lambda d: d.execute_script(
        'const v = document.getElementById("motion");'
        'return !v.hidden && v.readyState >= 2 && v.currentTime > 0.3;'), what)
    print('figure: %s: readyState %s currentTime %.2f paused %s hidden %s width %s error %s' % (
        what, *d.execute_script(STATE)), flush=True)
    return ok


d = chromium('1280,800', console=True)
try:
    log_in(d, opts.base, opts.password, 'live photo test')

    # The gallery: each Live Photo one item, marked LIVE; its video no item of its own.
    figures = [f.get_attribute('id') for f in d.find_elements(By.CSS_SELECTOR, '.grid figure')]
    check(len(figures) == 3, 'three items (two Live Photos and a photo): %s' % figures)
    for still, motion in ((opts.still, opts.motion), (opts.hevc_still, opts.hevc_motion)):
        check('p%d' % motion not in figures, 'the motion %d is not an item' % motion)
        badge = d.find_elements(By.CSS_SELECTOR, '#p%d .badge.live' % still)
        check(len(badge) == 1 and badge[0].text == '◉ LIVE' and badge[0].is_displayed(),
              'the still %d is marked LIVE: %s' % (still, [b.text for b in badge]))
    d.save_screenshot(os.path.join(opts.shots, 'live-gallery-1280x800.png'))

    # The viewer: the still, its motion hidden and not loaded until asked for.
    d.get('%s/view/%d' % (opts.base, opts.still))
    wait(d, lambda d: d.execute_script('const i = document.querySelector(".stage img"); return i && i.complete && i.naturalWidth > 0;'),
         'the still is shown')
    state = d.execute_script(STATE)
    check(state[3] is True and state[0] == 0, 'the motion is hidden and not loaded before it is asked for: %s' % state)
    check(d.find_element(By.ID, 'motion').get_attribute('src').endswith('/photo/%d/original' % opts.motion),
          'the motion is the MOV\'s original')
    # Hovering the LIVE button plays it.
    live = d.find_element(By.ID, 'live')
    ActionChains(d).move_to_element(live).perform()
    check(advancing(d, 'the motion plays while LIVE is hovered'), 'hover plays the motion')
    d.save_screenshot(os.path.join(opts.shots, 'live-playing-1280x800.png'))
    ActionChains(d).move_by_offset(300, 200).perform()
    wait(d, lambda d: d.execute_script('return document.getElementById("motion").hidden;'), 'leaving LIVE shows the still again')
    # Pressing the photo plays it from the start while held; letting go shows the still.
    still = d.find_element(By.CSS_SELECTOR, '.stage img')
    ActionChains(d).move_to_element(still).click_and_hold().perform()
    check(advancing(d, 'the motion plays while the photo is pressed'), 'a press plays the motion')
    ActionChains(d).release().perform()
    wait(d, lambda d: d.execute_script('const v = document.getElementById("motion"); return v.hidden && v.paused;'),
         'letting go shows the still again')
    check(not d.find_element(By.ID, 'live').get_attribute('class').count('cannot'), 'no "cannot play" for the H.264 motion')

    # The HEVC motion: this browser says whether it plays it; when it cannot, LIVE says so.
    d.get('%s/view/%d' % (opts.base, opts.hevc_still))
    hevc = d.execute_script('return document.getElementById("motion").canPlayType(\'video/mp4; codecs="hvc1.1.6.L120.90"\')')
    print('figure: this browser says of HEVC: "%s"' % hevc, flush=True)
    live = d.find_element(By.ID, 'live')
    if hevc == '':
        check('cannot play' in live.text, 'LIVE says this browser cannot play the HEVC motion: %s' % live.text)
        ActionChains(d).move_to_element(live).perform()
        time.sleep(1)
        check(d.execute_script('return document.getElementById("motion").hidden;'), 'no broken player over the still')
    else:
        ActionChains(d).move_to_element(live).perform()
        check(advancing(d, 'the HEVC motion plays (this browser plays HEVC)'), 'hover plays the HEVC motion')
    d.save_screenshot(os.path.join(opts.shots, 'live-hevc-1280x800.png'))

    errors = console_errors(d)
    check(not errors, 'no script errors or refused content in the console: %s' % errors)
except Exception as e:
    stopped(d, e, opts.shots, 'live-failed-1280x800.png')
    raise
finally:
    d.quit()

finish()
