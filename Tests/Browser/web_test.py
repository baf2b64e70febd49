#!/usr/bin/python3
"""ptkd's web interface in a real browser: headless Chromium through WebDriver (Debian's
chromium, chromium-driver and python3-selenium).

Run by Tests/EndToEndTests/WebBrowserTests.swift against a real ptkd that already holds photos
(one named <img src=x onerror=alert(1)>.png from a sender whose name carries a script, with a
note carrying one). Every check that fails prints why and makes the exit status 1.

It also holds more than 200 photos of realistic content (JPEGs of a fractal with noise) and a
HEIC: the gallery's image bytes, the thumbnails' sharpness, the photo page's preview and the
viewer (keys, swipes, the way back, times) are measured on a phone (390x844 at 3x) and a
desktop (1280x800), with the figures printed ("figure: ...").

  web_test.py --base https://127.0.0.1:PORT --link LINK --second-link LINK2 --dir PHOTOS
              --ptk 'PTK ARGS...' --shots DIR --upload A.png B.jpg C.png --hostile NAME --heic NAME
              --glass NAME --icon NAME --long NAME

The gallery's rows (issue 58) are checked at both sizes: thumbnails in a row share a height and
their widths follow their aspect ratios, every row but a section's last fills the width, the
checkerboard is behind the transparent PNG only, a long name ends with an ellipsis, and the
32x32 palette PNG's thumbnail is a PNG identical in pixels.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime, timedelta

from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from browser_common import check, chromium, failures

p = argparse.ArgumentParser()
p.add_argument('--base', required=True)
p.add_argument('--link', required=True)
p.add_argument('--dir', required=True)
p.add_argument('--ptk', required=True, help='the ptk command with its directory options')
p.add_argument('--shots', required=True)
p.add_argument('--upload', nargs=3, required=True)
p.add_argument('--hostile', required=True, help='the stored name of the photo whose name is markup')
p.add_argument('--heic', required=True, help='the stored name of a HEIC photo larger than its preview')
p.add_argument('--glass', required=True, help='the stored name of a PNG with transparent pixels')
p.add_argument('--icon', required=True, help='the stored name of a 32x32 palette PNG')
p.add_argument('--long', required=True, help='the stored name of a photo whose name cannot fit its place')
opts = p.parse_args()

def browser(script=True):
    return chromium('1280,800', script=script, load_timeout=30)


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
    d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {'width': 390, 'height': 844, 'deviceScaleFactor': 3, 'mobile': True})
    d.execute_cdp_cmd('Emulation.setTouchEmulationEnabled', {'enabled': True, 'maxTouchPoints': 5})


def wide(d):
    d.execute_cdp_cmd('Emulation.setDeviceMetricsOverride', {'width': 1920, 'height': 1080, 'deviceScaleFactor': 1, 'mobile': False})


def desktop(d):
    d.execute_cdp_cmd('Emulation.clearDeviceMetricsOverride', {})
    d.execute_cdp_cmd('Emulation.setTouchEmulationEnabled', {'enabled': False})
    d.set_window_size(1280, 800)


def wait(d, condition, seconds=20):
    try:
        # A page being replaced (after a form) makes elements stale for a moment: look again.
        WebDriverWait(d, seconds, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException)).until(lambda _: condition())
        return True
    except TimeoutException:
        return False


def thumbnails_loaded(d):
    """Scrolls down a screen at a time to the end, every page of the gallery appended (thumbnails
    load lazily), and returns (images, those with naturalWidth > 0)."""
    for _ in range(400):
        at_end = d.execute_script('window.scrollBy(0, window.innerHeight); '
                                  'return window.scrollY + window.innerHeight >= document.body.scrollHeight - 2 && !document.getElementById("more")')
        if at_end:
            break
        time.sleep(0.03)
    wait(d, lambda: d.execute_script(
        'return [...document.querySelectorAll("figure img")].every(i => i.complete)'), 20)
    return d.execute_script(
        'const i = [...document.querySelectorAll("figure img")]; return [i.length, i.filter(x => x.naturalWidth > 0).length]')


def fresh(d):
    """Loads without the browser's cache from now on, so that transferSize counts every byte."""
    d.execute_cdp_cmd('Network.enable', {})
    d.execute_cdp_cmd('Network.setCacheDisabled', {'cacheDisabled': True})


def image_bytes(d, part='/thumbnail/'):
    """(bytes over the wire, count) of the images loaded so far whose address has `part`."""
    return d.execute_script('''
        const e = performance.getEntriesByType("resource").filter(r => r.initiatorType === "img" && r.name.includes(arguments[0]));
        return [e.reduce((s, r) => s + r.transferSize, 0), e.length];''', part)


def first_screen_loaded(d):
    """Waits until every thumbnail on the first screen is loaded."""
    return wait(d, lambda: d.execute_script('''
        const shown = [...document.querySelectorAll("figure img")].filter(i => i.getBoundingClientRect().top < innerHeight);
        return shown.length > 0 && shown.every(i => i.complete && i.naturalWidth > 0);'''), 20)


def sharpness(d):
    """For every thumbnail on the screen: [address, pixels wide, high, painted CSS width, height, devicePixelRatio, cell width,
    no larger than its thumbnail (class small), its CSS width at the srcset's density]."""
    return d.execute_async_script('''
        const done = arguments[arguments.length - 1];
        const shown = [...document.querySelectorAll("figure img")].filter(i => {
          const r = i.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight && i.complete && i.naturalWidth > 0; });
        Promise.all(shown.map(async i => {
          // naturalWidth is divided by the srcset's density: the file's own pixels are a plain Image's.
          const plain = new Image(); plain.src = i.currentSrc; await plain.decode();
          const r = i.getBoundingClientRect(), a = plain.naturalWidth / plain.naturalHeight;
          return [i.currentSrc, plain.naturalWidth, plain.naturalHeight, Math.min(r.width, r.height * a), Math.min(r.height, r.width / a),
                  devicePixelRatio, r.width, i.closest("figure").classList.contains("small"), i.naturalWidth];
        })).then(done, e => done(String(e)));''')


def gallery_checks(d, size, target):
    """The gallery at `size`: its first screen's image bytes, its thumbnails' sharpness, its rows
    at most `target` CSS px tall, then every thumbnail loaded and their bytes, and the rows."""
    fresh(d)
    d.get(opts.base + '/')
    d.execute_script('performance.setResourceTimingBufferSize(2000)')
    first_screen_loaded(d)
    time.sleep(0.5)
    first, count = image_bytes(d)
    print(f'figure: {size} first screen: {count} thumbnails, {first} bytes', flush=True)
    check(count > 0 and first <= 1_500_000, f'{size}: the first screen loads at most 1.5 MB of images ({first} bytes, {count} thumbnails)')
    seen = sharpness(d)
    listed_ok = isinstance(seen, list) and len(seen) > 0
    check(listed_ok, f'{size}: thumbnails are on the first screen ({seen if not isinstance(seen, list) else len(seen)})')
    seen = seen if listed_ok else []
    if seen:
        x = seen[0]
        print(f'figure: {size} a thumbnail: {x[1]}x{x[2]} pixels painted {x[3]:.1f}x{x[4]:.1f} CSS px at {x[5]}x', flush=True)
    # A photo no larger than its thumbnail is its own thumbnail: drawn at most one pixel per CSS pixel, never stretched.
    blurry = [x for x in seen if not x[7] and (x[1] < x[3] * x[5] - 1 or x[2] < x[4] * x[5] - 1)]
    check(seen and not blurry, f'{size}: every thumbnail on the screen has a pixel for each device pixel it covers ({blurry[:2]})')
    stretched = [x for x in seen if x[7] and x[3] > x[8] + 0.5]
    check(not stretched, f'{size}: a photo no larger than its thumbnail is not stretched ({stretched[:2]})')
    rows = row_heights(d)
    print(f'figure: {size} first screen rows: {len(rows)} of heights {sorted(set(rows))} CSS px', flush=True)
    check(rows and max(rows) <= target, f'{size}: rows are at most {target} CSS px tall ({rows})')
    d.execute_script('window.scrollTo(0, 0)')
    d.save_screenshot(os.path.join(opts.shots, f'gallery-{size}.png'))
    images, loaded = thumbnails_loaded(d)
    total, count = image_bytes(d)
    per200 = total * 200 // max(count, 1)
    print(f'figure: {size} all thumbnails: {count} loaded, {total} bytes ({per200} per 200)', flush=True)
    check(count >= 200 and per200 <= 3_000_000, f'{size}: a page of 200 thumbnails loads at most 3 MB ({per200} bytes per 200, {count} loaded)')
    d.execute_cdp_cmd('Network.setCacheDisabled', {'cacheDisabled': False})
    rows_checks(d, size)
    return images, loaded


def row_heights(d):
    """The heights (CSS px, one decimal) of the rows of thumbnails whose top is on the screen."""
    return d.execute_script('''
        const rows = new Map();
        for (const a of document.querySelectorAll(".grid figure > a")) {
          const r = a.getBoundingClientRect();
          if (r.top >= 0 && r.top < innerHeight) rows.set(Math.round(r.top), Math.round(r.height * 10) / 10);
        }
        return [...rows.values()];''')


def rows_checks(d, size):
    """The justified rows over every page loaded: each row's thumbnails share a height, their
    widths follow their images' aspect ratios (within 2 CSS px), every row but a section's last
    fills the width (within 2 px); the checkerboard behind the transparent PNG only; the long
    name ends with an ellipsis; the palette icon's thumbnail is a PNG identical in pixels."""
    rows = d.execute_script('''
        const out = [];
        for (const grid of document.querySelectorAll(".grid")) {
          const g = grid.getBoundingClientRect(), rows = [];
          for (const f of grid.querySelectorAll(":scope > figure")) {
            const a = f.querySelector("a").getBoundingClientRect(), i = f.querySelector("img");
            const top = Math.round(a.top);
            if (!rows.length || rows[rows.length - 1].top !== top) rows.push({top: top, items: []});
            // The image's own aspect ratio (its file's), and whether it is drawn smaller than its place (capped, small).
            const capped = i && (i.style.width !== "" || f.classList.contains("small"));
            const aspect = i && i.naturalHeight ? i.naturalWidth / i.naturalHeight : null;
            rows[rows.length - 1].items.push([f.id, a.width, a.height, a.right, aspect, capped, g.right, grid.classList.contains("justified")]);
          }
          rows.forEach((r, k) => out.push({last: k === rows.length - 1, items: r.items}));
        }
        return out;''')
    justified = all(it[7] for r in rows for it in r['items'])
    check(rows and justified, f'{size}: app.js laid out every section ({len(rows)} rows)')
    uneven = [r['items'][0][0] for r in rows if max(it[2] for it in r['items']) - min(it[2] for it in r['items']) > 0.5]
    check(not uneven, f'{size}: the thumbnails of each row share a height (rows starting at {uneven[:3]} do not)')
    off = [(it[0], round(it[1], 1), round(it[2] * it[4], 1)) for r in rows for it in r['items']
           if it[4] and not it[5] and abs(it[1] - it[2] * it[4]) > 2]
    check(not off, f"{size}: each thumbnail's width follows its aspect ratio within 2 CSS px ({off[:3]})")
    short = [(r['items'][-1][0], round(r['items'][-1][6] - r['items'][-1][3], 1)) for r in rows
             if not r['last'] and abs(r['items'][-1][6] - r['items'][-1][3]) > 2]
    check(not short, f'{size}: every row but a section\'s last fills the width ({short[:3]})')
    print(f'figure: {size} rows: {len(rows)}, {sum(len(r["items"]) for r in rows)} thumbnails', flush=True)
    everyone = listed()
    glass, icon, long, opaque = (everyone[n]['ID'] for n in (opts.glass, opts.icon, opts.long, opts.heic))
    backgrounds = d.execute_script('''
        return arguments[0].map(id => getComputedStyle(document.querySelector("#p" + id + " > a")).backgroundImage);''',
        [glass, opaque, long])
    check('conic-gradient' in backgrounds[0], f'{size}: the transparent PNG has the checkerboard behind it ({backgrounds[0]})')
    check(backgrounds[1] == 'none' and backgrounds[2] == 'none', f'{size}: an opaque photo has none ({backgrounds[1:]})')
    cut = d.execute_script('''
        const n = document.querySelector("#p" + arguments[0] + " .name"), s = getComputedStyle(n);
        return [s.textOverflow, s.whiteSpace, n.scrollWidth, n.clientWidth, n.getClientRects().length];''', long)
    check(cut[0] == 'ellipsis' and cut[1] == 'nowrap' and cut[2] > cut[3] and cut[4] == 1,
          f'{size}: the long name is one line ending with an ellipsis ({cut})')
    same = d.execute_async_script('''
        const done = arguments[arguments.length - 1], img = document.querySelector("#p" + arguments[0] + " img");
        async function pixels(url) {
          const r = await fetch(url, {credentials: "same-origin"});
          const type = r.headers.get("content-type");
          const bitmap = await createImageBitmap(await r.blob(), {colorSpaceConversion: "none", premultiplyAlpha: "none"});
          const c = document.createElement("canvas"); c.width = bitmap.width; c.height = bitmap.height;
          const x = c.getContext("2d"); x.drawImage(bitmap, 0, 0);
          return [type, bitmap.width, bitmap.height, Array.from(x.getImageData(0, 0, c.width, c.height).data)];
        }
        Promise.all([pixels(img.currentSrc), pixels("/photo/" + arguments[0] + "/original")]).then(([t, o]) => {
          let diff = 0;
          for (let k = 0; k < o[3].length; k++) diff += Math.abs(t[3][k] - o[3][k]);
          done([t[0], t[1], t[2], o[1], o[2], diff / Math.max(1, o[3].length)]);
        }, e => done(String(e)));''', icon)
    check(isinstance(same, list) and same[0] == 'image/png' and same[1:3] == [32, 32] and same[3:5] == [32, 32] and same[5] == 0,
          f"{size}: the 32x32 palette PNG's thumbnail is a PNG identical in pixels ([type, size, original's size, mean difference]: {same})")
    d.execute_script('document.getElementById("p" + arguments[0]).scrollIntoView({block: "center"})', glass)
    time.sleep(0.5)
    d.save_screenshot(os.path.join(opts.shots, f'rows-{size}.png'))


def photo_id(d, nth):
    """The id of the gallery's nth figure (from 0)."""
    return int(d.execute_script('return document.querySelectorAll("figure")[arguments[0]].id.slice(1)', nth))


def path(d):
    """The current address without the origin ("/view/3?rating=2")."""
    return '/' + d.current_url.split('://', 1)[1].split('/', 1)[1]


def figure_in_view(d, pid):
    return wait(d, lambda: d.execute_script('''
        const f = document.getElementById("p" + arguments[0]); if (!f) return false;
        const r = f.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight;''', pid), 30)


def swipe(d, dx):
    """A one-finger swipe across the middle of the screen, `dx` CSS px (negative: to the left)."""
    x, y = 200, 400
    d.execute_cdp_cmd('Input.dispatchTouchEvent', {'type': 'touchStart', 'touchPoints': [{'x': x, 'y': y}]})
    for k in range(1, 6):
        d.execute_cdp_cmd('Input.dispatchTouchEvent', {'type': 'touchMove', 'touchPoints': [{'x': x + dx * k / 5, 'y': y + 5}]})
    d.execute_cdp_cmd('Input.dispatchTouchEvent', {'type': 'touchEnd', 'touchPoints': []})


def key(d, k):
    d.find_element(By.TAG_NAME, 'body').send_keys(k)


def viewer_checks(d, size):
    """The viewer from the gallery: it fills the screen; arrows; Tab; Escape back to the photo's
    figure, also from past the gallery's first page."""
    d.get(opts.base + '/')
    ids = [photo_id(d, k) for k in range(3)]
    d.find_element(By.CSS_SELECTOR, f'#p{ids[1]} a').click()
    check(wait(d, lambda: path(d) == f'/view/{ids[1]}', 10), f'{size}: a thumbnail opens the viewer ({path(d)})')
    wait(d, lambda: d.execute_script('const i = document.getElementById("photo"); return i && i.complete && i.naturalWidth > 0'), 10)
    fit = d.execute_script('const r = document.getElementById("photo").getBoundingClientRect(); return [r.width, r.height, innerWidth, innerHeight]')
    check(abs(fit[0] - fit[2]) < 2 and abs(fit[1] - fit[3]) < 2, f"{size}: the viewer's image fills the screen ({fit})")
    d.save_screenshot(os.path.join(opts.shots, f'viewer-{size}.png'))
    # The next photo's image (its src or a srcset candidate) is loaded before it is asked for.
    ahead = f'/photo/{ids[2]}/'
    check(wait(d, lambda: d.execute_script(
        'return performance.getEntriesByType("resource").some(r => r.initiatorType === "img" && r.name.includes(arguments[0]))', ahead), 10),
          f"{size}: the viewer loads the next photo's image ahead ({ahead})")
    key(d, Keys.ARROW_RIGHT)
    check(wait(d, lambda: path(d) == f'/view/{ids[2]}', 10), f'{size}: ArrowRight shows the next photo ({path(d)})')
    key(d, Keys.ARROW_LEFT)
    check(wait(d, lambda: path(d) == f'/view/{ids[1]}', 10), f'{size}: ArrowLeft shows the previous photo ({path(d)})')
    key(d, Keys.ARROW_LEFT)
    check(wait(d, lambda: path(d) == f'/view/{ids[0]}', 10), f'{size}: ArrowLeft again shows the first ({path(d)})')
    check(not d.find_elements(By.ID, 'prev') and d.find_elements(By.ID, 'next'), f'{size}: the first photo has a next link and no previous one')
    key(d, Keys.TAB)
    focus = d.execute_script('const a = document.activeElement; return [a.tagName, a.id, getComputedStyle(a).outlineStyle]')
    check(focus[0] == 'A' and focus[2] != 'none', f'{size}: Tab focuses a link, visibly ({focus})')
    key(d, Keys.ESCAPE)
    check(wait(d, lambda: path(d) == f'/#p{ids[0]}', 10) and figure_in_view(d, ids[0]),
          f'{size}: Escape closes back to the gallery with the photo in view ({path(d)})')
    # A photo past the gallery's first page: the way back loads pages until its figure is there.
    thumbnails_loaded(d)
    count = d.execute_script('return document.querySelectorAll("figure").length')
    late = photo_id(d, count - 2)
    d.get(f'{opts.base}/view/{late}')
    key(d, Keys.ESCAPE)
    check(count > 200 and wait(d, lambda: path(d) == f'/#p{late}', 10) and figure_in_view(d, late),
          f'{size}: Escape from photo {count - 1} of {count} (past the first page) finds its figure')
    return ids


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

    # The gallery's bytes and sharpness on a phone and a desktop; the viewer (keys, swipes, times);
    # the photo page of a HEIC.
    started = time.monotonic()
    phone(d)
    gallery_checks(d, '390x844', 120)
    ids = viewer_checks(d, '390x844')
    d.execute_cdp_cmd('Emulation.setTimezoneOverride', {'timezoneId': 'Asia/Kolkata'})
    d.get(f'{opts.base}/view/{ids[1]}')
    swipe(d, -150)
    check(wait(d, lambda: path(d) == f'/view/{ids[2]}', 10), f'a swipe to the left shows the next photo ({path(d)})')
    swipe(d, 150)
    check(wait(d, lambda: path(d) == f'/view/{ids[1]}', 10), f'a swipe to the right shows the previous photo ({path(d)})')
    swipe(d, 30)
    time.sleep(0.5)
    check(path(d) == f'/view/{ids[1]}', 'a short move is no swipe')
    # Times in the browser's zone, named.
    d.find_element(By.CSS_SELECTOR, 'details.info summary').click()
    t = d.execute_script('const t = document.querySelector("time"); return [t.getAttribute("datetime"), t.textContent]')
    local = (datetime.strptime(t[0][:19], '%Y-%m-%dT%H:%M:%S') + timedelta(hours=5, minutes=30)).strftime('%Y-%m-%d %H:%M:%S')
    check(t[1].startswith(local) and not t[1].endswith('UTC') and len(t[1]) > 20, f"a time is shown in the browser's zone, named ({t})")
    d.execute_cdp_cmd('Emulation.setTimezoneOverride', {'timezoneId': ''})
    heic_id = before[opts.heic]['ID']
    d.get(f'{opts.base}/photo/{heic_id}')
    wait(d, lambda: d.execute_script('const i = document.getElementById("photo"); return i && i.complete'), 10)
    shown = d.execute_script('const i = document.getElementById("photo"); return i ? [i.currentSrc, i.naturalWidth] : ["", 0]')
    check('/preview' in shown[0] and shown[1] > 360, f"the HEIC's page shows its preview ({shown})")
    d.save_screenshot(os.path.join(opts.shots, 'photo-heic-390x844.png'))
    desktop(d)
    gallery_checks(d, '1280x800', 180)
    viewer_checks(d, '1280x800')
    wide(d)
    d.get(f'{opts.base}/view/{heic_id}')
    time.sleep(0.5)
    d.save_screenshot(os.path.join(opts.shots, 'viewer-1920x1080.png'))
    desktop(d)
    print(f'figure: gallery and viewer checks took {time.monotonic() - started:.1f} s', flush=True)

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
    # Saved is not yet indexed: the indexer enters a photo between its other work (here the
    # previews of the photos sent above), so the listing is waited for.
    up = os.path.basename(opts.upload[0])
    deadline = time.monotonic() + 60
    after = listed()
    while up not in after and time.monotonic() < deadline:
        time.sleep(0.2)
        after = listed()
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
    session = [c for c in d.get_cookies()]
finally:
    d.quit()

# Without script (the same session's cookie), on a phone: the gallery still shows each photo at
# its own aspect ratio, never stretched past its 1x size (two thirds of it at 3x), within the
# screen's width, and "More photos" opens the next page.
n = browser(script=False)
try:
    n.get(opts.base + '/nothing-here')
    for c in session:
        n.add_cookie({k: c[k] for k in ('name', 'value', 'path', 'secure', 'httpOnly') if k in c})
    phone(n)
    n.get(opts.base + '/')
    first_screen_loaded(n)
    shown = n.execute_script('''
        return [...document.querySelectorAll(".grid figure img")].filter(i => i.getBoundingClientRect().top < innerHeight && i.naturalWidth)
          .map(i => { const r = i.getBoundingClientRect(); return [r.width, r.height, i.naturalWidth / i.naturalHeight,
                        Number(i.getAttribute("width")), i.closest(".grid").classList.contains("justified")]; });''')
    check(shown and not any(x[4] for x in shown), f'without script, the gallery is shown and no script laid it out ({len(shown)} thumbnails)')
    off = [x for x in shown if abs(x[0] - x[1] * x[2]) > 2 or x[0] > x[3] + 0.5]
    check(shown and not off, f'without script, each thumbnail keeps its aspect ratio and at most its 1x size ({off[:2]})')
    width = n.execute_script('return document.documentElement.scrollWidth')
    check(width <= 390 and n.find_elements(By.ID, 'more'), f'without script, the gallery fits 390 px ({width}) and links the next page')
    n.save_screenshot(os.path.join(opts.shots, 'gallery-noscript-390x844.png'))
finally:
    n.quit()

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
