"""Passwords on command lines: the flags of each program that take one, how the value is attached
(`-pVALUE` glued, `-p VALUE`, `--password=VALUE`), and credentials a program reads from a position
(`sqlplus user/PW@db`, `rabbitmqctl add_user NAME PW`, `net use \\\\host PW`) or from a pipe
(`echo PW | sudo -S …`).

A command runs from its program's name to the end of its line (a `\\` line continuation included)
or to the next `|`, `;` or `&`. The value after a flag is a secret when it is not another flag, a
variable (`$PW`, `%PW%`), or a file the program reads the password from.
"""

from .names import placeholder
from .shapes import Span, regex, value_group

TYPE_CHECKING = False
if TYPE_CHECKING:  # `re` is imported lazily (see shapes.regex)
    import re
    from collections.abc import Iterator


# How a flag takes its value: "glued" only (`mysql -pPW`: a bare `-p` prompts), "apart" only
# (`zip -P PW`), or "both". `--long` flags take `=VALUE` and ` VALUE` unless marked "eq".
_FLAGS: tuple[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], ...] = (
    (("mysql", "mariadb", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlpump", "mysqlsh",
      "mariadb-dump", "mysqlbinlog", "mydumper", "myloader"), (("-p", "glued"), ("--password", "eq"))),
    (("mongosh", "mongo", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop",
      "mongofiles"), (("-p", "both"), ("--password", "both"))),
    (("redis-cli", "keydb-cli", "valkey-cli"), (("-a", "apart"), ("--pass", "both"), ("--password", "both"))),
    (("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn",
      "ldapexop", "ldapurl"), (("-w", "both"),)),
    (("zip", "zipcloak", "unzip", "funzip"), (("-P", "apart"), ("--password", "both"))),
    (("7z", "7za", "7zr", "rar", "unrar"), (("-p", "glued"),)),
    (("sshpass",), (("-p", "both"),)),
    (("sqlcmd", "bcp", "osql", "isql", "sqsh", "tsql", "mssql-cli", "mssql-scripter"), (("-P", "both"),)),
    (("influx",), (("-password", "both"), ("--password", "both"), ("-t", "apart"), ("--token", "both"))),
    (("ipmitool",), (("-P", "both"),)),
    (("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), (("-P", "apart"), ("--pw", "both"))),
    (("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmpbulkget", "snmptrap"),
     (("-A", "apart"), ("-X", "apart"))),
    (("ssh-keygen",), (("-N", "apart"), ("-P", "apart"))),
    (("gpg", "gpg2"), (("--passphrase", "both"),)),
    (("wget",), (("--password", "both"), ("--http-password", "both"), ("--ftp-password", "both"),
                 ("--proxy-password", "both"))),
    (("aria2c",), (("--http-passwd", "both"), ("--ftp-passwd", "both"), ("--rpc-secret", "both"))),
    (("az",), (("-p", "apart"), ("--password", "both"), ("--secret", "both"))),
    (("psexec", "psexec.py", "wmiexec.py", "smbexec.py", "evil-winrm", "crackmapexec", "netexec", "nxc", "xfreerdp",
      "rdesktop", "smbmap", "winexe"), (("-p", "apart"), ("-P", "apart"), ("--password", "both"), ("/p:", "glued"))),
    (("hydra", "medusa", "ncrack"), (("-p", "apart"),)),
    (("twine",), (("-p", "apart"), ("--password", "both"))),
    (("plink", "pscp", "psftp", "putty"), (("-pw", "apart"),)),
    (("vsql",), (("-w", "apart"), ("--password", "both"))),
    (("hdbsql",), (("-p", "apart"),)),
    (("runas", "schtasks", "net"), (("/password:", "glued"), ("/p", "apart"))),
    (("keytool", "jarsigner"), (("-storepass", "apart"), ("-keypass", "apart"), ("-srcstorepass", "apart"),
                                ("-deststorepass", "apart"), ("-srckeypass", "apart"), ("-destkeypass", "apart"))),
    (("vncpasswd", "x11vnc"), (("-passwd", "apart"), ("-storepasswd", "apart"))),
    (("rclone",), (("--pass", "both"), ("--ftp-pass", "both"), ("--sftp-pass", "both"))),
    (("vault", "consul", "nomad"), (("-token", "both"), ("--token", "both"))),
    (("cqlsh",), (("-p", "apart"), ("--password", "both"))),
    (("clickhouse-client", "clickhouse"), (("--password", "both"),)),
    (("neo4j-admin", "cypher-shell"), (("-p", "apart"), ("--password", "both"))),
    (("rabbitmqadmin",), (("-p", "apart"), ("--password", "both"))),
    (("ansible", "ansible-playbook", "ansible-vault"), (("--vault-password", "both"),)),
    (("lftp",), (("--password", "both"),)),
    (("svn",), (("--password", "both"),)),
    (("hdiutil",), (("-passphrase", "apart"),)),
    (("pkcs12", "certutil", "pk12util"), (("-W", "apart"), ("-K", "apart"), ("-p", "apart"))),
    (("curl",), (("--oauth2-bearer", "both"), ("--pass", "both"))),
    (("openssl",), (("-k", "apart"),)),
)
_VALUE = r"""(?:'(?P<sq>[^'\n]*)'|"(?P<dq>[^"\n]*)"|(?P<s>[^\s'"|;&)]+))"""
_ARG = r"(?:['\"](?P<q>[^'\"\n]+)['\"]|(?P<s>\S+))"  # one argument, quoted or not
# Credentials a program takes by position or in a `user:pw` / `user%pw` / `user,pw` / `user/pw@db` pair.
_POSITIONAL = (
    # curl -u user:pw, --user, --proxy-user, -U (also wget --user=…:…)
    (("curl", "--user", "-u ", "-auth", "--auth", "-a "),
     r"(?:\s|^)(?:-u|--user|--proxy-user|-U|-auth|--auth|--basic-auth|(?<=http )-a|(?<=https )-a)[\s=]*[\"']?[^\s:\"'/]+:"
     r"(?P<s>[^\s\"'@/][^\s\"'@]*)"),
    # `<tool> login TOKEN`, `snyk auth TOKEN`, `codecov -t TOKEN`: a token where a command takes one
    (("login ", "auth ", " -t "), r"(?:\s(?:login|auth)|\s-t)\s+(?P<s>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
                                 r"-[0-9a-fA-F]{12}|[0-9a-fA-F]{32,}|[A-Za-z0-9_\-]{32,})(?=\s|$)"),
    # smbclient -U 'DOMAIN\user%pw', rpcclient, mount.cifs
    (("smbclient", "rpcclient", "cifs", "smbget", "smbcacls", "-u "), r"-U\s*['\"]?[^\s'\"%]+%(?P<s>[^\s'\"]+)"),
    # lftp -u user,pw host
    (("lftp",), r"lftp\b[^\n|;&]*?\s-u\s+['\"]?[^\s,'\"]+,(?P<s>[^\s'\"]+)"),
    # htpasswd -b[c] file user pw
    (("htpasswd",), r"htpasswd\b[^\n|;&]*?\s-[a-zA-Z]*b[a-zA-Z]*\s+(?:-\S+\s+)*\S+\s+\S+\s+" + _ARG),
    # rabbitmqctl add_user NAME PW, change_password NAME PW
    (("rabbitmqctl",), r"rabbitmqctl\b[^\n|;&]*?\s(?:add_user|change_password)\s+\S+\s+" + _ARG),
    # net use \\host\share PW /user:NAME
    (("net use", "net.exe use"),
     r"(?i)net(?:\.exe)?\s+use\s+(?:[a-z]:\s+)?\\\\\S+\s+(?:['\"](?P<q>[^'\"\n]+)['\"]|(?P<s>[^\s/]\S*))"),
    # Oracle: sqlplus user/PW@db, jdbc:oracle:thin:user/PW@host
    (("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl", "exp ", "imp ", "oracle:", "sqlcl", " sql "),
     r"(?<![\w/.])[A-Za-z_][\w$#]*/(?:\"(?P<q>[^\"\n]+)\"|(?P<s>[^\s/@'\"]+))@"),
    # gh secret set NAME --body VALUE
    (("secret set",), r"gh\s+secret\s+set\s+\S+[^\n|;&]*?\s(?:-b|--body)(?:\s+|=)" + _VALUE),
    # mc alias set NAME URL ACCESS SECRET (MinIO)
    (("alias set", "config host add"), r"\bmc\s+(?:alias\s+set|config\s+host\s+add)\s+\S+\s+\S+\s+\S+\s+(?P<s>[^\s'\"]+)"),
    # aws configure set aws_secret_access_key VALUE (and any `set NAME VALUE` of a secret name: see contexts)
    # a secret store's command: `az keyvault secret set … --value PW`, `gcloud secrets create … <<< 'PW'`
    (("secret",), r"(?i)\bsecrets?\b[^\n|;&]*?(?:\s(?:--value|--data|--secret-string|--string|--content|--payload)"
                  r"(?:\s+|=)|<<<\s*)(?:'(?P<q>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<s>[^\s'\"|;&]+))"),
    # echo PW | docker secret create …, | vault login -, | gh auth login --with-token: into a command that
    # takes a secret on stdin
    (("| ", "|"), r"(?:echo|printf)\s+(?:-[a-z]+\s+)?(?:'(?P<q>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<s>[^\s|'\"]+))\s*\|\s*"
                  r"(?=[^\n;&|]*\b(?:secrets?|password|passwd|token|credentials?|login)\b)[^\n;&|]*?(?:\s-(?=\s|$)|--stdin"
                  r"|--with-token|\bcreate\b|\bset\b|\badd\b|\blogin\b)"),
    # passwords fed through a pipe to a program that reads one from stdin
    (("| sudo", "|sudo", "passwd", "--password-stdin", "chpasswd", "--stdin", "-passin stdin", "--passwd-on-stdin"),
     r"(?:echo|printf)\s+(?:-[a-z]+\s+)?(?:'(?P<q>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<s>[^\s|'\"]+))\s*\|\s*"
     r"(?:\S+\s+)*?(?:sudo\s+(?:-\S+\s+)*-S|\S*passwd\b|\S*chpasswd\b|[^\n|;&]*--password-stdin|[^\n|;&]*--stdin"
     r"|[^\n|;&]*-passin\s+stdin|[^\n|;&]*--passwd-on-stdin)"),
    # chpasswd input: user:PW
    (("chpasswd",), r"(?:echo|printf)\s+['\"]?[a-z_][\w.\-]*:(?P<s>[^\s'\"|]+)['\"]?\s*\|\s*(?:sudo\s+)?chpasswd"),
    # openssl -passin/-passout/-pass pass:PW (any program that takes `pass:` literally)
    (("pass:",), r"(?<![\w\-])pass:(?P<s>[^\s\"']+)"),
    # expect scripts: expect "assword:" … send "PW\r"
    (("send ",), r"(?i)expect\s+[^\n]*(?:assword|passphrase|secret|token)[^\n]*\n[\s+]*send\s+(?:--\s+)?"
                 r"[\"'](?P<q>[^\"'\n]+?)(?:\\r|\\n)*[\"']"),
)


_BEFORE_PROGRAM = frozenset(" \t\n\r;|&(`'\"$/+-")
# After a program's name: the rest of its command (a continued line included).
_REST = r"(?=[\s'\"]|$)(?P<rest>[^\n|;&]{0,2000}(?:\\\n[^\n|;&]{0,2000}){0,20})"


def _flag_patterns(flags: tuple[tuple[str, str], ...]) -> list[str]:
    patterns = []
    for flag, how in flags:
        escaped = flag.replace("-", r"\-").replace("/", r"/")
        lead = r"(?<=\s)"
        if how in ("glued", "both") and not flag.startswith("--"):
            patterns.append(lead + escaped + r"(?P<g>(?:'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"-][^\s'\"]*))")
        if how in ("apart", "both") or (flag.startswith("--") and how != "none"):
            if how != "eq":
                patterns.append(lead + escaped + r"(?:\s+|=)" + _VALUE)
            else:
                patterns.append(lead + escaped + "=" + _VALUE)
    return patterns


_PATTERNS: list[tuple[tuple[str, ...], list[str]]] = [(programs, _flag_patterns(flags)) for programs, flags in _FLAGS]
_WORD = r"[a-z0-9_.+\-]+"
_PROGRAMS = frozenset(program for programs, _flags in _FLAGS for program in programs)
# The positional rules' literals that are single words: looked up in the document's words, not scanned for.
_WORD_LITERALS = frozenset(literal for literals, _pattern in _POSITIONAL for literal in literals
                           if literal.isalnum() or literal.replace("-", "").replace("_", "").isalnum())
_KNOWN_WORDS = _PROGRAMS | _WORD_LITERALS


def _value_span(match: "re.Match[str]", doc_offset: int) -> "tuple[int, int] | None":
    group = value_group(match)
    if group is None:
        return None
    (start, end), value = match.span(group), match.group(group)
    if group == "g" and len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        start, end, value = start + 1, end - 1, value[1:-1]
    if not _credential(value):
        return None
    return start + doc_offset, end + doc_offset


def _credential(value: str) -> bool:
    """Not empty, not a flag, a variable, a file, or a placeholder."""
    bare = value.strip()
    if len(bare) < 3 or (bare.isdigit() and len(bare) < 6) or bare.startswith(("-", "$", "%", "@", "<", "`", "file:",
                                                                              "env:", "fd:", "stdin")):
        return False
    return not placeholder(bare)


def _commands(doc: str, lower: str, program: str) -> "Iterator[tuple[str, int]]":
    """Each command line of `program` in `doc`: (the text after the program's name, where it starts)."""
    index, covered = lower.find(program), -1
    while index != -1:
        if index >= covered and (index == 0 or doc[index - 1] in _BEFORE_PROGRAM):
            found = regex(_REST).match(doc, index + len(program))
            if found is not None:
                covered = found.end()  # the same program again inside this command is one of its arguments
                yield found.group("rest"), found.start("rest")
        index = lower.find(program, index + len(program))


def command_spans(doc: str, lower: str) -> list[Span]:
    """Passwords given to programs on their command lines."""
    spans: list[Span] = []
    marker = "[REDACTED:password-flag]"
    words = _KNOWN_WORDS.intersection(regex(_WORD).findall(lower)) if len(lower) > 2000 else None
    for programs, flag_patterns in _PATTERNS:
        for program in programs:
            if not (program in words if words is not None else program in lower):
                continue
            for rest, offset in _commands(doc, lower, program):
                for pattern in flag_patterns:
                    for match in regex(pattern).finditer(rest):
                        span = _value_span(match, offset)
                        if span is not None:
                            spans.append((*span, marker))
    for literals, pattern in _POSITIONAL:
        if any(literal in words if words is not None and literal in _WORD_LITERALS else literal in lower
               for literal in literals):
            for match in regex(pattern).finditer(doc):
                span = _value_span(match, 0)
                if span is not None:
                    spans.append((*span, marker))
    return spans
