"""The part of systemd's unit-file rules the service tests need: reading a unit, its instance specifiers, its
environment (Environment=, then EnvironmentFile= overriding it) and the ExecStart= command line with the variables
substituted as systemd does (systemd.unit(5) "Specifiers", systemd.service(5) "Command lines", systemd.exec(5)
"EnvironmentFile="). Anything else the unit may start using (other specifiers, ExecStart prefixes, quoting) raises,
so a test built on this fails instead of running a command systemd would not.

    unit = parse(text)
    env = environment(unit, "video0", remap={"/etc/colorcam/": "/tmp/x/etc/"})
    argv = exec_start(unit, "video0", env)
"""
import re
import shlex


def parse(text):
    """{section: [(key, value), ...]} in file order; backslash-continued lines joined with a space."""
    sections, current, pending = {}, None, ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped[0] in "#;"):
            continue
        line, pending = pending + stripped, ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip() + " "
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, sep, value = line.partition("=")
        if current is None or not sep:
            raise ValueError(f"not a unit line: {line!r}")
        current.append((key.strip(), value.strip()))
    if pending:
        raise ValueError("the unit ends inside a continued line")
    return sections


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def specifiers(text, instance):
    """%i (the instance), %I (unescaped: \\xNN decoded) and %%; any other specifier raises."""
    def replace(m):
        c = m.group(1)
        if c == "i":
            return instance
        if c == "I":
            return re.sub(r"\\x([0-9a-fA-F]{2})", lambda h: chr(int(h.group(1), 16)), instance)
        if c == "%":
            return "%"
        raise ValueError(f"specifier %{c} is not handled by this test helper")
    return re.sub(r"%(.)", replace, text)


def remap_path(path, remap):
    for prefix, target in remap.items():
        if path.startswith(prefix):
            return str(target) + path[len(prefix):]
    return path


def read_env_file(path):
    """KEY=VALUE lines; blank lines and lines starting with # or ; skipped; one pair of quotes around a value
    removed (the files the tests write need no more of systemd's rules)."""
    env = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            key, sep, value = line.partition("=")
            if not sep:
                raise ValueError(f"{path}: not KEY=VALUE: {line!r}")
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            env[key.strip()] = value
    return env


def environment(unit, instance, remap=None):
    """The service's variables: Environment= assignments in order, then each EnvironmentFile= (paths remapped;
    a leading '-' makes a missing file fine, as in systemd), the files overriding Environment=."""
    env = {}
    for value in values(unit, "Service", "Environment"):
        for assignment in shlex.split(specifiers(value, instance)):
            key, _, val = assignment.partition("=")
            env[key] = val
    for value in values(unit, "Service", "EnvironmentFile"):
        optional = value.startswith("-")
        path = remap_path(specifiers(value.lstrip("-"), instance), remap or {})
        try:
            env.update(read_env_file(path))
        except FileNotFoundError:
            if not optional:
                raise
    return env


def exec_start(unit, instance, env):
    """The argv systemd runs for ExecStart=: split into words, specifiers resolved, then `${NAME}` replaced inside
    a word and a word that is exactly `$NAME` split at whitespace into zero or more words."""
    lines = values(unit, "Service", "ExecStart")
    if len(lines) != 1:
        raise ValueError(f"expected one ExecStart=, found {len(lines)}")
    if lines[0][:1] in "-@+!:":
        raise ValueError(f"ExecStart prefix {lines[0][0]!r} is not handled by this test helper")
    if any(q in lines[0] for q in "'\"\\"):
        raise ValueError("quoting and escapes in ExecStart= are not handled by this test helper")
    argv = []
    for word in lines[0].split():
        word = specifiers(word, instance)
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            argv += env.get(whole.group(1), "").split()
        else:
            argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), word))
    return argv
