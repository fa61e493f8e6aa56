#!/usr/bin/env python3
"""Checks that the user's documents point at things that exist.

For README.md, CHANGELOG.md, BENCHMARKS.md, RELIABILITY.md and docs/*.md (or the files named on the command line):

- every relative link `[text](path)`, `[text](path#anchor)`, `[text](#anchor)` and `[name]: path` names a file or
  directory of the repository, and its anchor a heading (or an `<a id>`) of the Markdown file it names, with the
  anchors GitHub makes (lowercased, punctuation dropped, spaces to hyphens, `-1`, `-2` for repeats);
- every section named in prose, `docs/deploy.md, "A CDN in front"` or `BENCHMARKS.md ("Client")`, is in a heading of
  that file or opens one of its paragraphs in bold (`**Installing.**`): these rot when a document is reordered, and
  no renderer's link checker sees them.

Links to other sites are not fetched. Code blocks and code spans are skipped. Standard library only; prints one line
per problem as `file:line: problem` and exits 1 if there is any.

    python3 Tests/docs/links.py            # the documents above
    python3 Tests/docs/links.py FILE...    # these files
"""

import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ["README.md", "CHANGELOG.md", "BENCHMARKS.md", "RELIABILITY.md", "docs/*.md"]

# A paragraph that opens with its name in bold, `**Installing.** …`, is a section a reader can be sent to.
NAMED_PARAGRAPH = re.compile(r"^\s*(?:[-*]\s+)?\*\*([^*]+?)[.:]?\*\*")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# `docs/deploy.md, "A CDN in front"`, `BENCHMARKS.md ("Client")`: a file and the title of one of its sections.
SECTION_REFERENCE = re.compile(r"((?:[\w.-]+/)*[\w.-]+\.md)(?:#[\w-]+)?\)?(?:,| \(|, ) ?\"([^\"]+)\"")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text (before the `-1`, `-2` of repeats)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in " -" or category[0] in "LNM" or category == "Pc":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def plain(heading: str) -> str:
    """A heading's text as a reader sees it: no code marks, no link targets, no emphasis."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[`*_]", "", text)


def lines_outside_code(path: Path):
    """(line number, line) for every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
            continue
        if fence is not None:
            if opened and opened.group(1) == fence:
                fence = None
            continue
        yield number, line


class Document:
    """A Markdown file's anchors and section titles, read once."""

    cache: dict = {}

    def __init__(self, path: Path):
        self.anchors = set()
        self.titles = []
        seen = {}
        for _, line in lines_outside_code(path):
            for anchor in HTML_ANCHOR.findall(line):
                self.anchors.add(anchor)
            named = NAMED_PARAGRAPH.match(line)
            if named:
                self.titles.append(plain(named.group(1)).lower())
            match = HEADING.match(line)
            if not match:
                continue
            title = match.group(2)
            self.titles.append(plain(title).lower())
            base = slug(title)
            count = seen.get(base, 0)
            seen[base] = count + 1
            self.anchors.add(base if count == 0 else f"{base}-{count}")

    @classmethod
    def of(cls, path: Path) -> "Document":
        key = path.resolve()
        if key not in cls.cache:
            cls.cache[key] = cls(key)
        return cls.cache[key]

    def has_section(self, title: str) -> bool:
        """Whether a heading holds `title` as whole words (`"Suite"` names "The suite: `Benchmarks/run`")."""
        wanted = re.compile(r"(?<!\w)" + re.escape(title.lower()) + r"(?!\w)")
        return any(wanted.search(candidate) for candidate in self.titles)


def check_target(source: Path, target: str):
    """The problem with one link target of `source`, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) or target.startswith("//"):
        return None  # another site, mailto:, …: not fetched
    path_part, _, anchor = target.partition("#")
    resolved = source if not path_part else (source.parent / path_part).resolve()
    if path_part.startswith("/"):
        resolved = ROOT / path_part.lstrip("/")
    if not resolved.exists():
        return f"{target}: no such file or directory"
    if anchor:
        if resolved.is_dir() or resolved.suffix.lower() != ".md":
            return f"{target}: an anchor into something that is not a Markdown file"
        if anchor not in Document.of(resolved).anchors:
            return f"{target}: {resolved.relative_to(ROOT)} has no heading with the anchor #{anchor}"
    return None


def check_section_reference(source: Path, name: str, title: str):
    """The problem with a section named in prose, or None (when the name is not a file of ours, nothing to say)."""
    candidates = [source.parent / name, ROOT / name]
    found = next((c for c in candidates if c.is_file()), None)
    if found is None:
        return None
    if not Document.of(found).has_section(title):
        return f'{name}, "{title}": {found.relative_to(ROOT)} has no section of that name'
    return None


def check(path: Path):
    problems = []
    for number, line in lines_outside_code(path):
        text = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        targets = INLINE_LINK.findall(text)
        definition = REFERENCE_DEFINITION.match(text)
        if definition:
            targets.append(definition.group(1))
        for target in targets:
            problem = check_target(path, target)
            if problem:
                problems.append(f"{path.relative_to(ROOT)}:{number}: {problem}")
        # Section references are read from the line with its code spans: `docs/x.md`, "Title" is common.
        for name, title in SECTION_REFERENCE.findall(line.replace("`", "")):
            problem = check_section_reference(path, name, title)
            if problem:
                problems.append(f"{path.relative_to(ROOT)}:{number}: {problem}")
    return problems


def main(arguments):
    if arguments:
        paths = [Path(a).resolve() for a in arguments]
    else:
        paths = [p for pattern in DEFAULT for p in sorted(ROOT.glob(pattern))]
    problems = []
    for path in paths:
        problems += check(path)
    for problem in problems:
        print(problem)
    if problems:
        print(f"links: {len(problems)} problem(s) in {len(paths)} files", file=sys.stderr)
        return 1
    print(f"links: {len(paths)} files, every relative link, anchor and named section resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
