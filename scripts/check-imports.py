#!/usr/bin/env python3
"""Checks that every target imports only the package targets Package.swift lists for it.

SwiftPM's --explicit-target-dependency-import-check (which the Makefile also turns on) accepts
an import of any target in the importer's transitive dependencies: ptk-send could import
PTKProtocol through PTKClient without naming it. This check asks for the direct list, so the
dependency lists in Package.swift are the layering, exactly. It reads `swift package
dump-package` and each target's Swift files; it prints each undeclared import and exits 1.

Some arrows are forbidden outright (FORBIDDEN below), even when Package.swift lists them: the
layering issue 43 took apart must not grow back through a one-line edit of the dependency lists.

It also keeps the C library's system calls in the syscall layer: outside PTKSystem, only test
code (test targets and PTKTestSupport) may import Glibc; everything else uses PTKSystem's typed
wrappers (open flags, errno names, poll events, file status, Duration, the condition lock).

Usage: scripts/check-imports.py [PACKAGE_DIR]
"""
import json, os, re, subprocess, sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
package = json.loads(subprocess.run(['swift', 'package', 'dump-package'], cwd=root, check=True,
                                    capture_output=True, text=True).stdout)
targets = {t['name']: t for t in package['targets']}
# Swift sees a target "ptk-send" as the module ptk_send.
module = {name.replace('-', '_'): name for name in targets}
import_line = re.compile(r'^\s*(?:@testable\s+|@_implementationOnly\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)', re.M)

def declared(target):
    names = set()
    for dep in target['dependencies']:
        for kind in ('byName', 'target'):
            if kind in dep:
                names.add(dep[kind][0])
    return names

# The only targets besides test targets that may import Glibc.
GLIBC_ALLOWED = {'PTKSystem', 'PTKTestSupport'}

# Arrows that must not come back, whatever Package.swift says (issue 43): checked against the
# dependency lists and against the imports both, so an edit of Package.swift cannot bring them
# back. (importer, imported): why.
FORBIDDEN = {
    ('PTKCLI', 'PTKProtocol'): 'the command-line tables need words (PTKVocabulary), not the wire protocol',
    ('PTKWeb', 'PTKLibrary'): 'PTKWeb renders plain values (WebPhoto) and does no I/O; PTKPhotoPages makes them of library photos',
    ('PTKLibrary', 'PTKWeb'): 'the library is data, the pages presentation: PTKPhotoPages, above both, maps one to the other (issue 55)',
    ('PTKWeb', 'PTKSystem'): 'PTKWeb does no I/O: its text and time helpers are pure (PTKVocabulary, PTKTime)',
    ('PTKAdminCommandLine', 'PTKLibrary'): 'ptk-docs links ptk\'s command table and must not link SQLite, libpng, libjpeg, libheif or libarchive',
    ('PTKClient', 'PTKStore'): 'ptk-send must not link libheif; types, names and packages come from PTKVocabulary',
    ('PTKStore', 'PTKProtocol'): 'the store answers in its own terms (StoredPhoto, StoreFailure), below every door; a door turns them into its wire messages',
    ('PTKVocabulary', 'PTKSystem'): 'the vocabulary is pure, below everything: no I/O, no C library',
    ('PTKWeb', 'PTKLocalSend'): 'the web interface stands on PTKHTTP, never on another door',
    ('PTKHTTP', 'PTKLocalSend'): 'the HTTP layer is below every door',
    ('PTKHTTP', 'PTKWeb'): 'the HTTP layer is below every door',
    ('PTKHTTP', 'PTKDaemon'): 'the HTTP layer is below every door',
    ('PTKHTTP', 'PTKStore'): 'the HTTP layer links no libheif: a body into the store is PTKUpload\'s, above both (issue 55)',
    ('PTKHTTP', 'PTKProtocol'): 'the HTTP layer is below every door, protocol v1 included (issue 55)',
    ('PTKV1Door', 'PTKHTTP'): 'protocol v1 is not HTTP: its door stands on PTKTransport (issue 55)',
    ('PTKV1Door', 'PTKLocalSend'): 'a door never stands on another door (issue 55)',
    ('PTKWebDoor', 'PTKLocalSend'): 'the web door stands on PTKHTTP, never on the LocalSend door',
    ('PTKDAVDoor', 'PTKLocalSend'): 'the WebDAV door stands on PTKHTTP, never on the LocalSend door',
    ('PTKLocalSendDoor', 'PTKDAV'): 'the LocalSend door stands on PTKHTTP, never on the WebDAV door',
    ('PTKLocalSendDoor', 'PTKWeb'): 'the LocalSend door stands on PTKHTTP, never on the web interface',
    ('PTKLocalSend', 'CHTTPParser'): 'HTTP is parsed in PTKHTTP alone',
    ('PTKDaemon', 'CHTTPParser'): 'HTTP is parsed in PTKHTTP alone',
}

# The doors (issue 55), each a module above PTKDoor and wired by PTKDaemon alone: no door
# imports the daemon, PTKDoor (what every door shares) imports no door, and no door imports
# another, but the web door the WebDAV and Nextcloud-compatible doors it serves on its port.
DOORS = ['PTKV1Door', 'PTKLocalSendDoor', 'PTKWebDoor', 'PTKDAVDoor', 'PTKInboxDoor', 'PTKCloudDoor']
SERVED_ON_WEB_PORT = {('PTKWebDoor', 'PTKDAVDoor'), ('PTKWebDoor', 'PTKCloudDoor')}
for door in DOORS:
    FORBIDDEN[(door, 'PTKDaemon')] = 'a door never stands on the composition root that wires it (issue 55)'
    FORBIDDEN[('PTKDoor', door)] = 'PTKDoor is what every door shares, below each of them (issue 55)'
    for other in DOORS:
        if other != door and (door, other) not in SERVED_ON_WEB_PORT:
            FORBIDDEN[(door, other)] = 'a door never stands on another door (issue 55); only the web door serves the WebDAV and Nextcloud-compatible doors, on its port'

# Targets that only the named importers may import or list, whoever asks: the C library is
# wrapped once. (imported): (importers, why).
ONLY_IMPORTED_BY = {
    'CExpat': ({'PTKDAV'}, 'XML is parsed by expat in PTKDAV alone (DTDs and entities refused there)'),
}

# Targets that may list and import nothing of ours beyond the named ones: pure cores that must
# stay below the doors and the I/O. (importer): (allowed, why).
ONLY_IMPORTS = {
    'PTKDAV': ({'PTKVocabulary', 'PTKTime', 'CExpat'}, 'the WebDAV core is pure: no I/O, no clock, nothing of ours but PTKVocabulary and PTKTime (its calendar)'),
    'PTKCloud': ({'PTKVocabulary'}, "the Nextcloud-compatible door's documents are pure values: nothing of ours but PTKVocabulary"),
    'PTKInbox': ({'PTKVocabulary', 'PTKTime'}, "the inbox's decisions are pure: no I/O, no clock, nothing of ours but PTKVocabulary and PTKTime"),
}

problems = []
for (importer, imported), why in sorted(FORBIDDEN.items()):
    if importer in targets and imported in declared(targets[importer]):
        problems.append(f'Package.swift: {importer} lists {imported}, a forbidden arrow: {why}')
for name, target in sorted(targets.items()):
    for dep in sorted(declared(target)):
        if dep in ONLY_IMPORTED_BY and name not in ONLY_IMPORTED_BY[dep][0]:
            problems.append(f'Package.swift: {name} lists {dep}, a forbidden arrow: {ONLY_IMPORTED_BY[dep][1]}')
        if name in ONLY_IMPORTS and dep not in ONLY_IMPORTS[name][0]:
            problems.append(f'Package.swift: {name} lists {dep}, a forbidden arrow: {ONLY_IMPORTS[name][1]}')
for name, target in sorted(targets.items()):
    if target['type'] == 'system':
        continue
    folder = target.get('path') or os.path.join('Tests' if target['type'] == 'test' else 'Sources', name)
    allowed = declared(target)
    for base, _, files in os.walk(os.path.join(root, folder)):
        for f in sorted(files):
            if not f.endswith('.swift'):
                continue
            path = os.path.join(base, f)
            for imported in import_line.findall(open(path, encoding='utf-8').read()):
                if imported in ('Glibc', 'Foundation') and name not in GLIBC_ALLOWED and target['type'] != 'test':
                    problems.append(f'{os.path.relpath(path, root)}: imports {imported}; outside PTKSystem use its typed wrappers')
                dep = module.get(imported)
                relative = os.path.relpath(path, root)
                if dep in ONLY_IMPORTED_BY and name not in ONLY_IMPORTED_BY[dep][0]:
                    problems.append(f'{relative}: imports {imported}, a forbidden arrow: {ONLY_IMPORTED_BY[dep][1]}')
                elif name in ONLY_IMPORTS and dep and dep != name and dep not in ONLY_IMPORTS[name][0]:
                    problems.append(f'{relative}: imports {imported}, a forbidden arrow: {ONLY_IMPORTS[name][1]}')
                elif (name, dep) in FORBIDDEN:
                    problems.append(f'{os.path.relpath(path, root)}: imports {imported}, a forbidden arrow: {FORBIDDEN[(name, dep)]}')
                elif dep and dep != name and dep not in allowed:
                    problems.append(f'{os.path.relpath(path, root)}: imports {imported}, which Package.swift does not list for {name}')
for p in problems:
    print(p, file=sys.stderr)
if problems:
    print(f'check-imports: {len(problems)} undeclared or forbidden import(s); add them to the target in Package.swift (unless forbidden) or drop them', file=sys.stderr)
    sys.exit(1)
print(f'check-imports: every import of {sum(1 for t in targets.values() if t["type"] != "system")} targets is declared in Package.swift')
