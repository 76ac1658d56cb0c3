"""Each Swift module's README says exactly what the module imports (its `Imports …:` line); the module's sources must
import nothing else and everything listed must be used, so the layering the READMEs describe is what the code does."""
import re

from conftest import ROOT

IMPORT = re.compile(r"^\s*(?:@testable\s+|@_implementationOnly\s+)?import\s+(?:(?:struct|class|enum|func|protocol|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)",
                    re.MULTILINE)


def modules():
    """Every folder under Sources/ with Swift files: its name and its files."""
    found = {}
    for folder in sorted((ROOT / "Sources").iterdir()):
        files = sorted(folder.rglob("*.swift"))
        if files:
            found[folder.name] = files
    return found


def declared(folder):
    readme = ROOT / "Sources" / folder / "README.md"
    assert readme.exists(), f"Sources/{folder} has no README.md saying what it owns and imports"
    lines = [l for l in readme.read_text().split("\n\n") if l.startswith("Imports")]
    assert len(lines) == 1, f"Sources/{folder}/README.md needs one paragraph starting 'Imports' (found {len(lines)})"
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", lines[0].split(":", 1)[1]))


def test_every_module_imports_exactly_what_its_readme_lists():
    found = modules()
    assert len(found) >= 9, sorted(found)  # the check must see the modules, not pass on an empty tree
    problems = []
    for folder, files in found.items():
        allowed = declared(folder)
        used = {}
        for f in files:
            for name in IMPORT.findall(f.read_text()):
                used.setdefault(name, f.relative_to(ROOT))
        for name in sorted(set(used) - allowed):
            problems.append(f"{used[name]} imports {name}, not in Sources/{folder}/README.md's list")
        for name in sorted(allowed - set(used)):
            problems.append(f"Sources/{folder}/README.md lists {name}, which no file there imports")
    assert not problems, "\n".join(problems)


def test_the_check_catches_an_import_outside_the_list(tmp_path):
    # The parser sees the forms the sources use (plain, @testable, `import struct`), and skips comments' prose.
    text = "import ColorcamCore\n@testable import Stream\nimport struct Foundation.Data\n// we import nothing here\n"
    assert IMPORT.findall(text) == ["ColorcamCore", "Stream", "Foundation"]
