#!/usr/bin/python3
"""The Nextcloud Android app's requests, replayed against a ptkd (issue 57), written from its
sources (nextcloud/android and nextcloud/android-library):

- ConnectivityServiceImpl.isInternetWalled: GET /index.php/204, which must be 204 and empty;
- GetStatusRemoteOperation: GET /status.php, `installed` true and a version the app accepts
  (MainApp: below 20 refused, at or below 30 "outdated");
- GetCapabilitiesRemoteOperation: GET /ocs/v2.php/cloud/capabilities?format=json with
  OCS-APIREQUEST, ocs.meta.status and message, data.version's ints, core.pollinterval an int;
- AuthenticatorActivity, login flow v2 (with --web-link, the person's browser session):
  POST /index.php/login/v2, the poll 404 until approved, the person approving in the browser,
  the poll's server, loginName and appPassword, then the poll 404 again;
- GetUserInfoRemoteOperation: GET /ocs/v2.php/cloud/user?format=json;
- the auto-upload folder: PROPFIND Depth 1 with WebdavUtils.getAllPropSet (404 when missing),
  MKCOL of it (CreateFolderRemoteOperation);
- UploadFileRemoteOperation: PUT with OC-Total-Length, X-OC-Mtime, X-OC-Ctime; 200/201/204 and
  an etag;
- ChunkedFileUploadRemoteOperation (a photo over CHUNK_SIZE_MOBILE, 10,240,000 bytes): MKCOL
  uploads/USER/MD5 with an absolute Destination, PROPFIND Depth 1 of it (resume), PUT 000001...
  each with Destination, MOVE .file with Destination, Overwrite T, X-OC-Mtime, X-OC-Ctime;
- the follow-up PROPFIND Depth 1 of the folder, listing both photos with their ETags.

Usage: android.py URL USER PASSWORD SMALL_PHOTO [--big BIG_PHOTO] [--web-link LINK [--password-out FILE]]
Prints one line per step ("ok STEP ..."); exits 1 at the first step the receiver answers
differently from what the app needs, saying which.
"""
import argparse, base64, hashlib, http.client, json, os, re, ssl, sys, urllib.parse

p = argparse.ArgumentParser()
p.add_argument('url')
p.add_argument('user')
p.add_argument('password')
p.add_argument('small')
p.add_argument('--big')
p.add_argument('--web-link')
p.add_argument('--password-out', help='where to write the app password login flow v2 handed out (for the caller to look for in logs)')
p.add_argument('--chunk', type=int, default=10_240_000, help='chunk size (the app: 10,240,000 on mobile data)')
opts = p.parse_args()
base = urllib.parse.urlsplit(opts.url)
context = ssl._create_unverified_context()
connection = http.client.HTTPSConnection(base.hostname, base.port, context=context)
user_agent = 'Mozilla/5.0 (Android) Nextcloud-android/33.0.0'


def fail(step, why):
    print(f'FAILED {step}: {why}')
    sys.exit(1)


def request(method, path, headers=None, body=None, auth=True, password=None):
    h = {'User-Agent': user_agent}
    if auth:
        h['Authorization'] = 'Basic ' + base64.b64encode(f'{opts.user}:{password or opts.password}'.encode()).decode()
    h.update(headers or {})
    connection.request(method, path, body=body, headers=h)
    r = connection.getresponse()
    return r, r.read()


def ok(step, detail=''):
    print(f'ok {step} {detail}'.rstrip())


r, body = request('GET', '/index.php/204', auth=False)
if r.status != 204 or body:
    fail('connectivity', f'{r.status} with {len(body)} bytes: the app would hold uploads back as behind a captive portal')
ok('connectivity')

r, body = request('GET', '/status.php', auth=False)
status = json.loads(body)
if r.status != 200 or status.get('installed') is not True:
    fail('status', f'{r.status} {body[:200]!r}')
major = int(str(status['version']).split('.')[0])
if major < 20 or major <= 30:
    fail('status', f'version {status["version"]}: the app refuses below 20 and warns at or below 30')
ok('status', status['version'])

r, body = request('GET', '/ocs/v2.php/cloud/capabilities?format=json', {'OCS-APIREQUEST': 'true'}, auth=False)
caps = json.loads(body)['ocs']
if r.status != 200 or 'status' not in caps['meta'] or 'message' not in caps['meta']:
    fail('capabilities', f'{r.status} {body[:200]!r}')
v = caps['data']['version']
if not all(isinstance(v[k], int) for k in ('major', 'minor', 'micro')) or not isinstance(v['string'], str):
    fail('capabilities', f'version {v}')
if not isinstance(caps['data']['capabilities']['core']['pollinterval'], int):
    fail('capabilities', 'core.pollinterval is not an int')
ok('capabilities')

if opts.web_link:
    r, body = request('POST', '/index.php/login/v2', auth=False)
    if r.status != 200:
        fail('login v2', f'{r.status} {body[:200]!r}')
    flow = json.loads(body)
    token, endpoint, login = flow['poll']['token'], flow['poll']['endpoint'], flow['login']
    poll_path = urllib.parse.urlsplit(endpoint).path
    form = {'Content-Type': 'application/x-www-form-urlencoded'}
    r, body = request('POST', poll_path, form, body='token=' + urllib.parse.quote(token), auth=False)
    if r.status != 404:
        fail('login v2', f'the poll before approval answered {r.status}, not 404')
    # The person, in the browser: logs in to ptk's pages with the link `ptk web-link` printed, opens the flow's page, approves.
    browser = http.client.HTTPSConnection(base.hostname, base.port, context=context)
    browser.request('GET', urllib.parse.urlsplit(opts.web_link).path)
    rr = browser.getresponse()
    rr.read()
    cookie = (rr.getheader('Set-Cookie') or '').split(';')[0]
    browser.request('GET', urllib.parse.urlsplit(login).path, headers={'Cookie': cookie})
    rr = browser.getresponse()
    page = rr.read().decode()
    # The form that approves: its action, its CSRF token, the name it suggests for the password.
    form_html = next((f for f in re.findall(r'<form[^>]*>.*?</form>', page, re.S) if 'value="approve"' in f), None)
    action = form_html and re.search(r'action="([^"]*)"', form_html)
    csrf = form_html and re.search(r'name="csrf" value="([^"]+)"', form_html)
    suggested = form_html and re.search(r'name="name" value="([^"]*)"', form_html)
    if rr.status != 200 or not action or not csrf:
        fail('login v2', f'the flow page ({rr.status}) has no approve form: {page[:300]!r}')
    fields = {'csrf': csrf.group(1), 'decision': 'approve', 'name': suggested.group(1) if suggested else 'android'}
    browser.request('POST', action.group(1).replace('&amp;', '&'), body=urllib.parse.urlencode(fields),
                    headers={'Cookie': cookie, 'Content-Type': 'application/x-www-form-urlencoded', 'Origin': opts.url.rstrip('/')})
    rr = browser.getresponse()
    rr.read()
    if rr.status not in (200, 303):
        fail('login v2', f'approving answered {rr.status}')
    r, body = request('POST', poll_path, form, body='token=' + urllib.parse.quote(token), auth=False)
    if r.status != 200:
        fail('login v2', f'the poll after approval answered {r.status}')
    got = json.loads(body)
    if not got.get('server') or not got.get('loginName') or not got.get('appPassword'):
        fail('login v2', f'the poll lacks server, loginName or appPassword: {sorted(got)}')
    r, body = request('POST', poll_path, form, body='token=' + urllib.parse.quote(token), auth=False)
    if r.status != 404:
        fail('login v2', f'a second poll answered {r.status}, not 404: the password must be handed out once')
    opts.user, opts.password = got['loginName'], got['appPassword']
    if opts.password_out:
        open(opts.password_out, 'w').write(opts.password)
    ok('login v2', opts.user)

r, body = request('GET', '/ocs/v2.php/cloud/user?format=json', {'OCS-APIREQUEST': 'true'})
if r.status != 200:
    fail('user', f'{r.status} {body[:200]!r}')
user_id = json.loads(body)['ocs']['data']['id']
ok('user', user_id)

OC, NC = 'http://owncloud.org/ns', 'http://nextcloud.org/ns'
props_dav = ['displayname', 'getcontenttype', 'resourcetype', 'getcontentlength', 'getlastmodified', 'creationdate', 'getetag']
props_oc = ['permissions', 'id', 'fileid', 'size', 'favorite', 'owner-id', 'owner-display-name', 'comments-unread']
props_nc = ['is-encrypted', 'mount-type', 'has-preview', 'note', 'sharees', 'rich-workspace', 'creation_time', 'upload_time', 'lock',
            'lock-owner-type', 'lock-owner', 'lock-owner-displayname', 'lock-owner-editor', 'lock-time', 'lock-timeout', 'lock-token',
            'system-tags', 'system-tags-color', 'file-metadata-size', 'file-metadata-gps', 'metadata-photos-size', 'metadata-photos-gps',
            'metadata-files-live-photo', 'hidden', 'share-download-limits']
all_props = ('<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:" xmlns:oc="' + OC + '" xmlns:nc="' + NC + '"><D:prop>'
             + ''.join(f'<D:{n}/>' for n in props_dav) + ''.join(f'<oc:{n}/>' for n in props_oc) + ''.join(f'<nc:{n}/>' for n in props_nc)
             + '</D:prop></D:propfind>')
files = f'/remote.php/dav/files/{urllib.parse.quote(user_id)}'
folder = files + '/InstantUpload'


def propfind(path, depth='1'):
    return request('PROPFIND', path, {'Depth': depth, 'Content-Type': 'text/xml; charset=UTF-8'}, body=all_props)


def listing(body):
    """href -> (etag, getcontentlength) of a 207 body."""
    out = {}
    for resp in re.findall(r'<D:response>(.*?)</D:response>', body.decode(), re.S):
        href = urllib.parse.unquote(re.search(r'<D:href>(.*?)</D:href>', resp).group(1))
        etag = re.search(r'<D:getetag>(.*?)</D:getetag>', resp)
        length = re.search(r'<D:getcontentlength>(.*?)</D:getcontentlength>', resp)
        out[href] = (etag.group(1).replace('&quot;', '"') if etag else None, length.group(1) if length else None)
    return out


r, body = propfind(folder + '/')
if r.status != 404:
    fail('auto-upload folder', f'PROPFIND of a folder not made yet answered {r.status}')
r, body = request('MKCOL', folder + '/')
if r.status != 201:
    fail('auto-upload folder', f'MKCOL answered {r.status}')
ok('auto-upload folder')

small = open(opts.small, 'rb').read()
mtime = int(os.stat(opts.small).st_mtime)
name = os.path.basename(opts.small)
r, body = request('PUT', folder + '/' + urllib.parse.quote(name), {'OC-Total-Length': str(len(small)), 'X-OC-Mtime': str(mtime),
                                                                    'X-OC-Ctime': str(mtime), 'Content-Type': 'image/png'}, body=small)
if r.status not in (200, 201, 204) or not r.getheader('etag'):
    fail('upload', f'{r.status}, etag {r.getheader("etag")}: {body[:200]!r}')
small_etag = r.getheader('etag')
ok('upload', name)

expected = {folder + '/' + name: small_etag}
if opts.big:
    big = open(opts.big, 'rb').read()
    big_name = os.path.basename(opts.big)
    destination = opts.url.rstrip('/') + folder + '/' + urllib.parse.quote(big_name)
    uploads = f'/remote.php/dav/uploads/{urllib.parse.quote(user_id)}/' + hashlib.md5(big).hexdigest()
    r, body = request('MKCOL', uploads, {'Destination': destination})
    r, body = request('PROPFIND', uploads, {'Depth': '1', 'Content-Type': 'text/xml; charset=UTF-8'},
                      body='<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:resourcetype/></D:prop></D:propfind>')
    if r.status != 207:
        fail('chunked upload', f'PROPFIND of the upload folder answered {r.status}')
    chunk_id = 0
    for offset in range(0, len(big), opts.chunk):
        chunk_id += 1
        r, body = request('PUT', f'{uploads}/{chunk_id:06d}', {'Destination': destination}, body=big[offset:offset + opts.chunk])
        if r.status not in (200, 201, 204):
            fail('chunked upload', f'chunk {chunk_id} answered {r.status}: {body[:200]!r}')
    big_mtime = int(os.stat(opts.big).st_mtime)
    r, body = request('MOVE', uploads + '/.file', {'Destination': destination, 'Overwrite': 'T', 'X-OC-Mtime': str(big_mtime),
                                                   'X-OC-Ctime': str(big_mtime)})
    if r.status not in (200, 201, 204):
        fail('chunked upload', f'MOVE .file answered {r.status}: {body[:300]!r}')
    expected[folder + '/' + big_name] = r.getheader('etag') or r.getheader('oc-etag')
    ok('chunked upload', f'{big_name} in {chunk_id} chunks')

r, body = propfind(folder + '/')
if r.status != 207:
    fail('listing', f'{r.status}')
listed = listing(body)
for href, etag in expected.items():
    if href not in listed or listed[href][0] != etag:
        fail('listing', f'{href}: listed {listed.get(href)}, answered {etag} when sent')
ok('listing', f'{len(listed) - 1} photos')
