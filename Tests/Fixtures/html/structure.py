#!/usr/bin/env python3
"""Prints what a real HTML parser (Python's html.parser) finds in each HTML file named on the
command line: one line per start tag (its name and its attributes' names, in order), end tag,
comment, declaration, processing instruction and unknown declaration; text is left out. Each
file's lines follow a line "=== FILE". The tests compare a page rendered with hostile texts
against the same page rendered with harmless texts of the same shape: any element or attribute
a text made shows up as a difference. Lines are JSON, ASCII only.

Usage: structure.py FILE...
"""
import html.parser, json, sys

class Structure(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.lines = []
    def emit(self, *event):
        self.lines.append(json.dumps(list(event)))
    def handle_starttag(self, tag, attrs): self.emit('start', tag, [name for name, _ in attrs])
    def handle_startendtag(self, tag, attrs): self.emit('startend', tag, [name for name, _ in attrs])
    def handle_endtag(self, tag): self.emit('end', tag)
    def handle_comment(self, data): self.emit('comment')
    def handle_decl(self, decl): self.emit('decl', decl)
    def handle_pi(self, data): self.emit('pi')
    def unknown_decl(self, data): self.emit('unknown_decl')

for path in sys.argv[1:]:
    with open(path, encoding='utf-8') as f:
        text = f.read()
    parser = Structure()
    parser.feed(text)
    parser.close()
    print('=== ' + path)
    for line in parser.lines:
        print(line)
