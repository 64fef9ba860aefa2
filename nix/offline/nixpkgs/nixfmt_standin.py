"""Offline stand-in for `nixfmt --check` (real nixfmt cannot be had here).

It checks only a few rules of nixfmt's RFC 166 style that a reviewer keeps hitting,
and says so on every run: no tabs, no trailing spaces, a final newline, lines of at
most 100 columns, and no list with two or more items on one line. It does not
reformat anything and does not prove a file is nixfmt-formatted.
"""
import sys

WIDTH = 100


def code_parts(lines):
    """Yield (number, line with string contents blanked) for code outside ''...''."""
    in_indented = False
    for number, line in enumerate(lines, 1):
        out, i = [], 0
        while i < len(line):
            if in_indented:
                if line.startswith("'''", i) or line.startswith("''$", i) or line.startswith("''\\", i):
                    i += 3
                elif line.startswith("''", i):
                    in_indented, i = False, i + 2
                    out.append("''")
                else:
                    i += 1
                continue
            ch = line[i]
            if line.startswith("''", i):
                in_indented, i = True, i + 2
                out.append("''")
            elif ch == '"':
                j = i + 1
                while j < len(line) and line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                out.append('""')
                i = j + 1
            elif ch == "#":
                break
            else:
                out.append(ch)
                i += 1
        yield number, "".join(out)


def one_line_lists(code):
    """Lists opened and closed on this line with two or more top-level items."""
    found, i = [], 0
    while i < len(code):
        if code[i] != "[":
            i += 1
            continue
        depth, j, items, in_item = 0, i + 1, 0, False
        while j < len(code):
            c = code[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                if depth == 0:
                    break
                depth -= 1
            if depth == 0 and c.isspace():
                in_item = False
            elif not in_item:
                items, in_item = items + 1, True
            j += 1
        if j < len(code) and code[j] == "]" and items >= 2:
            found.append(code[i:j + 1])
        i += 1
    return found


def check(path):
    text = open(path, encoding="utf-8").read()
    problems = []
    if text and not text.endswith("\n"):
        problems.append(f"{path}: no final newline")
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if "\t" in line:
            problems.append(f"{path}:{number}: tab")
        if line != line.rstrip(" "):
            problems.append(f"{path}:{number}: trailing spaces")
        if len(line) > WIDTH:
            problems.append(f"{path}:{number}: {len(line)} columns (> {WIDTH})")
    for number, code in code_parts(lines):
        for found in one_line_lists(code):
            problems.append(f"{path}:{number}: list with several items on one line: {found}")
    return problems


def main(argv):
    print("nixfmt (offline stand-in): checks whitespace, line width <= 100 and one-line lists "
          "only; real nixfmt was NOT run", file=sys.stderr)
    if not argv or argv[0] != "--check":
        print("the offline stand-in cannot format files; use --check", file=sys.stderr)
        return 2
    problems = [p for path in argv[1:] for p in check(path)]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
