#!/usr/bin/python3
"""Videos in a real browser (issue 58): headless Chromium through WebDriver (Debian's chromium,
chromium-driver and python3-selenium).

Run by Tests/EndToEndTests/VideoBrowserTests.swift against a real ptkd with a web password that
holds an H.264 MP4 and an HEVC MOV (made by Debian's ffmpeg). The browser logs in; the gallery
marks both as videos with their length; the viewer plays the MP4 (readyState, currentTime
advancing; the browser reads the original with Range requests); the MOV either plays too, or, when this browser cannot
play HEVC (its canPlayType says so: Chromium on Linux without a platform decoder), shows its
poster, the reason and the download instead of a broken player. Every check that fails prints
why and makes the exit status 1.

  video_test.py --base https://127.0.0.1:PORT --password PASSWORD --mp4 ID --mov ID --shots DIR
"""
import argparse
import os

from browser_common import check, chromium, console_errors, finish, log_in, stopped, wait

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

p = argparse.ArgumentParser()
p.add_argument('--base', required=True)
p.add_argument('--password', required=True)
p.add_argument('--mp4', type=int, required=True)
p.add_argument('--mov', type=int, required=True)
p.add_argument('--shots', required=True)
opts = p.parse_args()


def playing(d, pid):
    """Plays the viewer's video, muted (a headless browser allows that without a gesture), and
    says whether its time advanced past 0.5 s with data at hand."""
    d.execute_script('const v = document.getElementById("video"); v.muted = true; v.play();')
    ok = wait(d, lambda d: d.execute_script(
        'const v = document.getElementById("video"); return v.readyState >= 2 && v.currentTime > 0.5;'),
        'video %d plays past 0.5 s' % pid)
    state = d.execute_script(
        'const v = document.getElementById("video");'
        'return [v.readyState, v.currentTime, v.videoWidth, v.videoHeight, v.error && v.error.code];')
    print('figure: video %d readyState %s currentTime %.2f size %sx%s error %s' % (pid, *state), flush=True)
    return ok and state[2] > 0


d = chromium('1280,800', console=True, extra=['--autoplay-policy=no-user-gesture-required'])
try:
    log_in(d, opts.base, opts.password, 'video test')

    # The gallery: each video marked, with its length (both clips are 2 s).
    for pid in (opts.mp4, opts.mov):
        badge = d.find_elements(By.CSS_SELECTOR, '#p%d .badge' % pid)
        check(len(badge) == 1 and badge[0].text == '▶ 0:02',
              'the gallery marks video %d with its length: %s' % (pid, [b.text for b in badge]))
        check(badge[0].is_displayed() if badge else False, 'the badge of %d is shown' % pid)
    d.save_screenshot(os.path.join(opts.shots, 'video-gallery-1280x800.png'))

    # The viewer plays the H.264 MP4.
    d.get('%s/view/%d' % (opts.base, opts.mp4))
    video = d.find_element(By.ID, 'video')
    check(video.is_displayed(), 'the MP4 has a player')
    check(d.execute_script('return document.getElementById("video").canPlayType(\'video/mp4; codecs="avc1.640028"\')') != '',
          'this browser says it plays H.264')
    check(playing(d, opts.mp4), 'the MP4 plays in the viewer')
    check(not d.find_element(By.ID, 'cannot').is_displayed(), 'no "cannot play" beside a playing video')
    d.save_screenshot(os.path.join(opts.shots, 'video-mp4-1280x800.png'))
    # Escape still closes the viewer while the player has the focus.
    d.execute_script('document.getElementById("video").focus();')
    d.find_element(By.ID, 'video').send_keys(Keys.ESCAPE)
    wait(d, lambda d: '/view/' not in d.current_url, 'Escape goes back to the gallery')

    # The HEVC MOV: played if this browser can, else its poster, the reason and the download.
    d.get('%s/view/%d' % (opts.base, opts.mov))
    hevc = d.execute_script('return document.getElementById("video").canPlayType(\'video/mp4; codecs="hvc1.1.6.L120.90"\')')
    print('figure: this browser says of HEVC: "%s"' % hevc, flush=True)
    if hevc == '':
        wait(d, lambda d: d.find_element(By.ID, 'cannot').is_displayed(), 'the MOV shows "cannot play"')
        check(not d.find_element(By.ID, 'video').is_displayed(), 'no broken player for the MOV')
        text = d.find_element(By.ID, 'cannot').text
        check('cannot play this HEVC video' in text, 'it says why: %s' % text)
        link = d.find_element(By.CSS_SELECTOR, '#cannot a[download]')
        check(link.get_attribute('href').endswith('/photo/%d/original?download=1' % opts.mov), 'and offers the download')
        poster = d.find_element(By.CSS_SELECTOR, '#cannot img')
        wait(d, lambda d: d.execute_script('return arguments[0].complete && arguments[0].naturalWidth > 0;', poster),
             'its poster is shown')
    else:
        check(playing(d, opts.mov), 'the MOV plays in the viewer (this browser plays HEVC)')
    d.save_screenshot(os.path.join(opts.shots, 'video-mov-1280x800.png'))

    errors = console_errors(d)
    check(not errors, 'no script errors or refused content in the console: %s' % errors)
except Exception as e:
    stopped(d, e, opts.shots, 'video-failed-1280x800.png')
    raise
finally:
    d.quit()

finish()
