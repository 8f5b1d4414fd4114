"""Held-out secrets: fake credentials in realistic formats, none of them in `tests/secret_corpus.py`.

Each `Secret` is (family, format name, text as a coding session shows it, the exact part that must
disappear). The corpus measures whether a redactor recognises a secret by its shape and its place
(a password flag, a value next to a secret-named key, a credential slot in a URL, key material),
not by a list of provider names: many formats here use prefixes, tools and syntaxes a list is
unlikely to hold.

Every value is random (seeded) and assembled at run time from pieces, so the repository never holds
a literal that a secret scanner would flag. A few passwords are human-chosen on purpose (people type
those under password flags and fields).

Run `python -m bench.privacy.secrets` for counts per family and a self-check.
"""

import base64
import json
import string
from typing import NamedTuple

from bench.privacy.draw import (
    ALNUM,
    B64,
    BASE32,
    BASE32_LOWER,
    BASE58,
    DIGITS,
    HEX,
    LOWER_DIGITS,
    UPPER_DIGITS,
    UPPER_HEX,
    URLSAFE,
    Draw,
    b64,
    begin,
    end,
)


class Secret(NamedTuple):
    family: str
    name: str
    text: str
    secret: str


_draw = Draw(20261207)
_rng = _draw.rng
rnd, uid, raw = _draw.rnd, _draw.uid, _draw.raw
PUNCT_PW = ALNUM + "!#%*-_.^"



def mixed(length: int, alphabet: str = ALNUM) -> str:
    """Random characters with at least one digit and one letter when the alphabet has both."""
    chars = [_rng.choice(alphabet) for _ in range(length)]
    digits = [c for c in alphabet if c.isdigit()]
    letters = [c for c in alphabet if c.isalpha()]
    if digits and letters and length >= 4:
        i, j = _rng.sample(range(length), 2)
        if not any(c.isdigit() for c in chars):
            chars[i] = _rng.choice(digits)
        if not any(c.isalpha() for c in chars):
            chars[j] = _rng.choice(letters)
    return "".join(chars)


def hexs(length: int) -> str:
    return mixed(length, HEX)




def urlb64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")





def wrap(text: str, width: int = 64) -> list[str]:
    return [text[i:i + width] for i in range(0, len(text), width)]


def box(rows: list[tuple[str, str]]) -> str:
    """An OpenStack/Confluent-style ASCII table: the first row is the header."""
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    rule = "+" + "-" * (w0 + 2) + "+" + "-" * (w1 + 2) + "+"
    lines = [f"| {a:<{w0}} | {b:<{w1}} |" for a, b in rows]
    return "\n".join([rule, lines[0], rule, *lines[1:], rule])


BIP39_WORDS = ("abandon ability absorb abstract access acoustic actress adapt admit advance aerobic afford "
               "agent airport alcohol almost anchor ancient angle animal ankle antique anxiety apart "
               "arctic arena armor arrow artist aspect assault asthma atom auction august autumn avocado "
               "bamboo banner barrel basket beach believe bicycle biology blanket blossom bonus border "
               "bracket breeze brisk bronze bubble bundle cabin cactus canal canvas carbon castle").split()


def _build() -> list[Secret]:
    out: list[Secret] = []

    def add(family: str, name: str, secret: str, template: str, **parts: str) -> None:
        assert "{S}" in template or parts, name
        text = template
        for key, value in parts.items():
            text = text.replace("{" + key + "}", value)
        out.append(Secret(family, name, text.replace("{S}", secret), secret))

    def put(family: str, name: str, text: str, secret: str) -> None:
        out.append(Secret(family, name, text, secret))

    # ------------------------------------------------------------------ command lines
    cl = "command-line"
    add(cl, "ldapsearch -w", mixed(16),
        "ldapsearch -x -H ldap://ldap.corp.example.com -D cn=admin,dc=example,dc=com -w {S} "
        "-b ou=people,dc=example,dc=com '(uid=jdoe)' mail")
    add(cl, "mongosh -p", mixed(18),
        'mongosh "mongodb://db0.example.com:27017/orders" -u admin -p {S} --authenticationDatabase admin')
    add(cl, "zip -P", "Summer2024!x", "zip -r -P '{S}' hr-export-2024-11.zip exports/ payroll.csv")
    add(cl, "7z -p", mixed(20), "7z a -p{S} -mhe=on deploy-secrets.7z ./deploy")
    add(cl, "unzip -P", mixed(14), "unzip -P {S} vendor-drop.zip -d /tmp/vendor")
    add(cl, "sqlplus user/pw@", mixed(14), "sqlplus scott/{S}@//db-ora.example.com:1521/ORCL @migrate.sql")
    add(cl, "mysqldump --password=", mixed(16),
        "mysqldump -h db.internal -u backup --password={S} --single-transaction shop > shop.sql")
    add(cl, "crontab PGPASSWORD pg_dump", mixed(20),
        "0 3 * * * PGPASSWORD='{S}' pg_dump -h db.internal -U backup -Fc app > /backups/app-$(date +\\%F).dump")
    add(cl, "sqlcmd -P", mixed(16), "sqlcmd -S tcp:sql01.corp.local,1433 -U sa -P '{S}' -d erp -Q \"SELECT @@VERSION\"")
    add(cl, "bcp -P", mixed(15), "bcp erp.dbo.Orders out orders.dat -S sql01 -U etl_reader -P {S} -c -t,")
    add(cl, "mongodump --password", mixed(18),
        "mongodump --host rs0/mongo1:27017 --username backup --password {S} --authenticationDatabase admin --gzip")
    add(cl, "influx -password", mixed(16), "influx -host tsdb.internal -username admin -password {S} -database telegraf")
    add(cl, "rabbitmqctl add_user", mixed(20), "rabbitmqctl add_user orders_svc {S}")
    add(cl, "keytool -keypass", mixed(14),
        "keytool -genkeypair -alias server -keyalg RSA -keystore server.jks -storepass changeit -keypass {S} "
        "-dname CN=api.acme.dev")
    add(cl, "openssl -passin pass:", mixed(16), "openssl rsa -in server.key.enc -out server.key -passin pass:{S}")
    add(cl, "openssl -passin env: with inline env", mixed(16),
        "P12PASS='{S}' openssl pkcs12 -in client.p12 -nodes -passin env:P12PASS -out client.pem")
    add(cl, "openssl enc -k", mixed(24), "openssl enc -aes-256-cbc -pbkdf2 -salt -k {S} -in db.sql -out db.sql.enc")
    add(cl, "gpg --passphrase", mixed(22),
        "gpg --batch --yes --pinentry-mode loopback --passphrase '{S}' -o release.tar.gz -d release.tar.gz.gpg")
    add(cl, "ansible vault password file echo", mixed(24),
        "echo '{S}' > ~/.vault_pass.txt && ansible-vault decrypt group_vars/prod/vault.yml "
        "--vault-password-file ~/.vault_pass.txt")
    add(cl, "ansible-playbook -e become password", mixed(14),
        'ansible-playbook -i inventory/prod site.yml -e "ansible_become_password={S}" --limit web')
    add(cl, "wget --http-password=", mixed(16),
        "wget --http-user=ci --http-password={S} https://artifacts.corp.example.com/builds/app-1.4.2.tar.gz")
    add(cl, "aria2c --http-passwd=", mixed(16),
        "aria2c --http-user=mirror --http-passwd={S} -x 8 https://mirror.corp.example.com/iso/rocky-9.iso")
    add(cl, "lftp -u user,pw", mixed(14), "lftp -u deploy,{S} sftp://files.example.net -e 'mirror -R dist/ /www; bye'")
    add(cl, "RSYNC_PASSWORD env rsync", mixed(18),
        "RSYNC_PASSWORD={S} rsync -av --delete ./public/ rsync://web@backup.example.net/site/")
    add(cl, "az login -p", mixed(16), "az login -u ops@acme.onmicrosoft.com -p '{S}' --allow-no-subscriptions")
    add(cl, "net use password /user:", "Spring#Garden88",
        r"net use Z: \\fs01.corp.local\projects {S} /user:CORP\jdoe /persistent:no")
    add(cl, "psexec -p", mixed(14), r"psexec \\build-agent-07 -u CORP\svc_build -p {S} -h cmd /c ipconfig /all")
    add(cl, "expect send password", mixed(16),
        'spawn ssh admin@10.0.4.11\nexpect "password:"\nsend "{S}\\r"\nexpect "$ "\nsend "uptime\\r"\ninteract')
    add(cl, "mysqladmin password", "Tr0ub4dor&3", "mysqladmin -u root password '{S}'")
    add(cl, "sudo -S from echo", "letmein-Admin-77", "echo '{S}' | sudo -S apt-get install -y nginx")
    add(cl, "chpasswd", mixed(16), "echo 'deploy:{S}' | sudo chpasswd")
    add(cl, "redis-cli --pass", mixed(24), "redis-cli -h cache.internal --user app --pass {S} --no-auth-warning INFO")
    add(cl, "kubectl --from-literal", mixed(20),
        "kubectl create secret generic db-creds -n prod --from-literal=username=app --from-literal=password={S}")
    add(cl, "helm --set password", mixed(18),
        "helm upgrade --install pg bitnami/postgresql -n data --set auth.postgresPassword={S} "
        "--set primary.persistence.size=20Gi")
    add(cl, "gh secret set --body", mixed(32), 'gh secret set SIGNING_SECRET --repo acme/api --body "{S}"')
    add(cl, "heroku config:set", mixed(40, HEX), "heroku config:set SECRET_KEY_BASE={S} -a acme-api")
    add(cl, "flyctl secrets set", mixed(24), "fly secrets set DATABASE_PASSWORD={S} --app acme-api-staging")
    add(cl, "aws configure set secret", mixed(40, B64), "aws configure set aws_secret_access_key {S} --profile staging")
    add(cl, "curl --oauth2-bearer", mixed(40, URLSAFE), "curl --oauth2-bearer {S} https://api.acme.dev/v2/me")
    add(cl, "httpie -a user:pw", mixed(16), "http -a admin:{S} POST https://jenkins.acme.dev/job/deploy/build")
    add(cl, "git -c http.extraHeader", mixed(40, URLSAFE),
        'git -c http.extraHeader="Authorization: Bearer {S}" clone https://git.acme.dev/platform/infra.git')
    add(cl, "npm config set nexus token", "NpmToken." + uid(),
        "npm config set //nexus.acme.dev/repository/npm-private/:_authToken {S}")
    add(cl, "twine upload -p", mixed(20), "twine upload --repository-url https://pypi.acme.dev/ -u ci -p {S} dist/*")
    add(cl, "helm repo add --password", mixed(18),
        "helm repo add acme https://charts.acme.dev --username ci --password {S}")
    add(cl, "svn --password", mixed(14),
        "svn checkout https://svn.acme.dev/repos/legacy/trunk legacy --username jdoe --password {S} --non-interactive")
    add(cl, "SNOWSQL_PWD env", mixed(18), "SNOWSQL_PWD='{S}' snowsql -a xy12345.eu-central-1 -u ETL_SVC -w ETL_WH -f load.sql")
    add(cl, "mc alias set", mixed(40, B64),
        "mc alias set minio https://minio.acme.dev minioadmin-ci {S}")
    add(cl, "RESTIC_PASSWORD env", mixed(24),
        "RESTIC_PASSWORD='{S}' restic -r s3:s3.amazonaws.com/acme-backups/web backup /var/www")
    add(cl, "BORG_PASSPHRASE env", mixed(24),
        "BORG_PASSPHRASE='{S}' borg create --stats ssh://borg@backup.example.net/./repo::'{hostname}-{now}' /etc /srv")
    add(cl, "xfreerdp /p:", mixed(14), "xfreerdp /v:10.20.0.15 /u:Administrator /p:'{S}' /cert:ignore /dynamic-resolution")
    add(cl, "plink -pw", mixed(14), "plink -ssh -batch -pw {S} deploy@203.0.113.20 \"sudo systemctl restart app\"")
    add(cl, "wp user create --user_pass", mixed(16), "wp user create editor2 editor2@acme.dev --role=editor --user_pass={S}")
    add(cl, "mosquitto_pub -P", mixed(16),
        "mosquitto_pub -h broker.acme.dev -p 8883 -u sensor01 -P {S} -t plant/line1/temp -m 21.4")
    add(cl, "nmcli wifi password", "correct-horse-battery-9", 'nmcli dev wifi connect "Office-5G" password "{S}"')
    add(cl, "jenkins-cli -auth user:token", "11" + hexs(32),
        "java -jar jenkins-cli.jar -s https://jenkins.acme.dev/ -auth jdoe:{S} build deploy-prod -p TAG=v1.4.2")
    add(cl, "java -Djavax.net.ssl.keyStorePassword", mixed(16),
        "java -Djavax.net.ssl.keyStore=/etc/app/keystore.p12 -Djavax.net.ssl.keyStorePassword={S} -jar app.jar")
    add(cl, "java -jar --spring.datasource.password", mixed(18),
        "java -jar orders-service.jar --spring.profiles.active=prod --spring.datasource.password={S}")
    add(cl, "dotnet user-secrets set", mixed(32), 'dotnet user-secrets set "Payments:ApiSecret" "{S}" --project src/Api')
    add(cl, "docker run -e POSTGRES_PASSWORD", mixed(20),
        "docker run -d --name pg -e POSTGRES_USER=app -e POSTGRES_PASSWORD={S} -p 5432:5432 postgres:16")
    add(cl, "cqlsh -p", mixed(14), "cqlsh cassandra-0.cassandra.data.svc 9042 -u cassandra -p {S}")
    add(cl, "vsql -w", mixed(14), "vsql -h vertica.internal -U dbadmin -w {S} -c 'SELECT version();'")
    add(cl, "clickhouse-client --password", mixed(16),
        "clickhouse-client --host ch.internal --user default --password {S} --query 'SHOW DATABASES'")
    add(cl, "mount cifs password=", mixed(14),
        "sudo mount -t cifs //nas01/media /mnt/media -o username=plex,password={S},uid=1000,vers=3.0")
    add(cl, "ipmitool -P", mixed(12), "ipmitool -I lanplus -H 10.0.9.21 -U ADMIN -P {S} chassis power status")
    add(cl, "snmpwalk -A auth passphrase", mixed(16),
        "snmpwalk -v3 -l authPriv -u monitor -a SHA -A {S} -x AES -X privPhrase2 10.0.0.1 ifDescr")
    add(cl, "powershell ConvertTo-SecureString", mixed(16),
        '$pw = ConvertTo-SecureString "{S}" -AsPlainText -Force\n'
        '$cred = New-Object System.Management.Automation.PSCredential("CORP\\svc_deploy", $pw)')
    add(cl, "cmdkey /pass:", mixed(14), "cmdkey /generic:TERMSRV/rds01.corp.local /user:CORP\\jdoe /pass:{S}")
    add(cl, "nats --password", mixed(18), "nats sub 'orders.>' --server nats://nats.internal:4222 --user orders --password {S}")
    add(cl, "vault write userpass password=", mixed(16), "vault write auth/userpass/users/ci password={S} policies=ci-read")
    add(cl, "vault kv put api_key=", mixed(32), "vault kv put secret/payments/prod api_key={S} region=eu")
    add(cl, "az storage --account-key", mixed(86, B64) + "==",
        "az storage blob upload --account-name acmedata --account-key {S} -c releases -f app.zip -n app-1.4.2.zip")
    add(cl, "gcloud sql users set-password", mixed(18),
        "gcloud sql users set-password postgres --instance=orders-db --password={S}")
    add(cl, "subprocess argv list password", mixed(16),
        'subprocess.run(["mysql", "-h", "db.internal", "-u", "root", "--password", "{S}", "-e", "SHOW SLAVE STATUS"])')
    add(cl, "k8s container args list", mixed(20),
        'containers:\n  - name: exporter\n    image: prom/mysqld-exporter:v0.15.1\n'
        '    args: ["--mysqld.username=exporter", "--mysqld.password", "{S}"]')
    add(cl, "shell history custom --api-token", mixed(32),
        "  498  cd ~/src/acme-cli\n  499  make build\n  500  ./bin/acme deploy --env prod --api-token {S}\n  501  git status")
    add(cl, "ssh-keygen -N passphrase", mixed(18), "ssh-keygen -t ed25519 -C deploy@acme -N '{S}' -f ~/.ssh/deploy_ed25519")
    add(cl, "db2 connect using", mixed(14), "db2 connect to SAMPLE user db2inst1 using {S}")
    add(cl, "hdbsql -p", mixed(14), "hdbsql -n hana.internal:30015 -u SYSTEM -p {S} \"SELECT * FROM M_DATABASE\"")
    add(cl, "SSHPASS env sshpass -e", mixed(14), "SSHPASS='{S}' sshpass -e scp build.tar.gz deploy@10.0.4.11:/tmp/")
    add(cl, "curl form client_secret", mixed(40, URLSAFE),
        "curl -X POST https://auth.acme.dev/oauth/token -d 'grant_type=client_credentials&client_id=reports-cron"
        "&client_secret={S}&audience=https://api.acme.dev'")
    add(cl, "firebase functions:config:set", mixed(32),
        'firebase functions:config:set mailer.key="{S}" mailer.from="noreply@acme.dev"')

    # ------------------------------------------------------------------ name and value apart
    nv = "name-value-siblings"
    add(nv, "k8s env name/value", mixed(22),
        'env:\n  - name: DATABASE_HOST\n    value: "postgres.data.svc"\n  - name: DATABASE_PASSWORD\n'
        '    value: "{S}"\n  - name: LOG_LEVEL\n    value: info')
    add(nv, "ecs task definition environment", mixed(32),
        '"environment": [\n  {"name": "NODE_ENV", "value": "production"},\n  {"name": "STRIPE_SECRET", "value": "{S}"}\n]')
    add(nv, "aws ssm get-parameter SecureString", mixed(24),
        '{\n    "Parameter": {\n        "Name": "/prod/db/master_password",\n        "Type": "SecureString",\n'
        '        "Value": "{S}",\n        "Version": 3,\n        "LastModifiedDate": "2024-10-02T09:14:55.120000+00:00",\n'
        '        "ARN": "arn:aws:ssm:eu-west-1:123456789012:parameter/prod/db/master_password"\n    }\n}')
    add(nv, "terraform variable default", mixed(20),
        'variable "db_password" {\n  type      = string\n  sensitive = true\n  default   = "{S}"\n}')
    add(nv, ".NET appSettings add key/value", mixed(86, B64) + "==",
        '<appSettings>\n  <add key="StorageAccountName" value="acmedata" />\n'
        '  <add key="StorageAccountKey" value="{S}"/>\n</appSettings>')
    add(nv, "cloudformation ParameterKey/ParameterValue", mixed(20),
        '[\n  {"ParameterKey": "Environment", "ParameterValue": "prod"},\n'
        '  {"ParameterKey": "DBMasterPassword", "ParameterValue": "{S}"}\n]')
    add(nv, "arm parameters file value", mixed(20),
        '"parameters": {\n    "adminUsername": { "value": "azureuser" },\n    "adminPassword": { "value": "{S}" }\n}')
    add(nv, "az webapp appsettings list", mixed(32),
        '[\n  {\n    "name": "WEBSITE_RUN_FROM_PACKAGE",\n    "slotSetting": false,\n    "value": "1"\n  },\n'
        '  {\n    "name": "PAYMENTS_API_SECRET",\n    "slotSetting": false,\n    "value": "{S}"\n  }\n]')
    add(nv, "elastic beanstalk option_settings", mixed(20),
        "option_settings:\n  - namespace: aws:elasticbeanstalk:application:environment\n    option_name: DB_PASSWORD\n"
        "    value: {S}")
    add(nv, "gitlab ci variable api json", mixed(32),
        '{"variable_type":"env_var","key":"DEPLOY_TOKEN","value":"{S}","protected":true,"masked":false,'
        '"environment_scope":"*"}')
    add(nv, "argo workflow parameter", mixed(32),
        "arguments:\n  parameters:\n    - name: api-token\n      value: {S}\n    - name: region\n      value: eu-west-1")
    add(nv, "html hidden input api_key", mixed(32),
        '<form method="post" action="/v1/charge">\n  <input type="hidden" name="api_key" value="{S}">\n'
        '  <input type="text" name="amount">\n</form>')
    add(nv, "html password input value", mixed(14),
        '<input type="password" name="password" id="pw" value="{S}" autocomplete="current-password">')
    add(nv, "postman environment export", mixed(40, URLSAFE),
        '{\n  "key": "apiSecret",\n  "value": "{S}",\n  "type": "secret",\n  "enabled": true\n}')
    add(nv, "java setProperty", mixed(16),
        'Properties props = new Properties();\nprops.setProperty("mail.smtp.user", "alerts@acme.dev");\n'
        'props.setProperty("mail.smtp.password", "{S}");')
    add(nv, "configparser set", mixed(18), "config.set('database', 'password', '{S}')")
    add(nv, "fetch Headers.append", mixed(32, URLSAFE), 'const headers = new Headers();\nheaders.append("X-Session-Key", "{S}");')
    add(nv, "xhr setRequestHeader", mixed(40, URLSAFE),
        "xhr.open('GET', '/api/reports');\nxhr.setRequestHeader('Authorization', 'Bearer {S}');")
    add(nv, "go Header.Set", mixed(32), 'req.Header.Set("X-Auth-Token", "{S}")')
    add(nv, "java setRequestProperty", mixed(40, HEX), 'conn.setRequestProperty("Authorization", "token {S}");')
    add(nv, ".NET NetworkCredential", mixed(16), 'client.Credentials = new NetworkCredential("svc_reports", "{S}", "CORP");')
    add(nv, "smtplib login positional", mixed(16),
        'server = smtplib.SMTP_SSL("smtp.acme.dev", 465)\nserver.login("alerts@acme.dev", "{S}")')
    add(nv, "ldap3 Connection positional", mixed(16),
        "conn = Connection(server, 'cn=svc-sync,ou=services,dc=acme,dc=dev', '{S}', auto_bind=True)")
    add(nv, "hibernate property name", mixed(16),
        '<property name="hibernate.connection.username">app</property>\n'
        '<property name="hibernate.connection.password">{S}</property>')
    add(nv, "java properties xml entry", mixed(16),
        '<properties>\n  <entry key="jdbc.url">jdbc:postgresql://db:5432/app</entry>\n'
        '  <entry key="jdbc.password">{S}</entry>\n</properties>')
    add(nv, "pgbouncer userlist", mixed(20), '"app_rw" "{S}"\n"app_ro" "md5' + hexs(32) + '"')
    add(nv, "terraform output -json", mixed(24),
        '{\n  "db_endpoint": {\n    "sensitive": false,\n    "type": "string",\n'
        '    "value": "orders.c9x.eu-west-1.rds.amazonaws.com"\n'
        '  },\n  "db_password": {\n    "sensitive": true,\n    "type": "string",\n    "value": "{S}"\n  }\n}')
    add(nv, "keycloak client-secret json", mixed(32), '{"type":"secret","value":"{S}"}')
    add(nv, "az keyvault secret show", mixed(24),
        '{\n  "attributes": {\n    "enabled": true,\n    "recoveryLevel": "Recoverable+Purgeable"\n  },\n'
        '  "id": "https://acme-kv.vault.azure.net/secrets/sql-admin-password/' + hexs(32) + '",\n'
        '  "name": "sql-admin-password",\n  "value": "{S}"\n}')

    # ------------------------------------------------------------------ provider tokens
    pt = "provider-token"
    add(pt, "supabase sbp_", "sb" + "p_" + hexs(40), "npx supabase login --token {S}")
    fly = "fm2_" + rnd(B64, 160) + "," + "fm2_" + rnd(B64, 180)
    add(pt, "fly FlyV1 fm2_", fly, 'env:\n  FLY_API_TOKEN: "FlyV1 {S}"\nsteps:\n  - run: flyctl deploy --remote-only')
    add(pt, "tailscale tskey-auth", "tskey-" + "auth-" + mixed(11) + "CNTRL-" + mixed(33),
        "sudo tailscale up --authkey={S} --advertise-tags=tag:ci")
    add(pt, "pinecone pcsk_", "pc" + "sk_" + mixed(5) + "_" + mixed(63), 'pc = Pinecone(api_key="{S}")')
    add(pt, "langsmith lsv2_pt_", "lsv2" + "_pt_" + hexs(32) + "_" + hexs(10), 'os.environ["LANGSMITH_API_KEY"] = "{S}"')
    add(pt, "resend re_", "re" + "_" + mixed(8) + "_" + mixed(24, URLSAFE), "const resend = new Resend('{S}');")
    add(pt, "shippo ShippoToken", "shippo" + "_live_" + hexs(40),
        'curl https://api.goshippo.com/shipments/ -H "Authorization: ShippoToken {S}"')
    fcm = "AAAA" + mixed(7, URLSAFE) + ":APA" + "91b" + mixed(134, URLSAFE)
    add(pt, "fcm legacy server key", fcm,
        "curl -X POST https://fcm.googleapis.com/fcm/send -H 'Authorization: key={S}' "
        "-H 'Content-Type: application/json' -d @push.json")
    add(pt, "azure devops pat in prose", mixed(52, BASE32_LOWER),
        "Use the PAT {S} to push to the Azure Repos remote; it expires in 30 days.")
    add(pt, "alibaba LTAI id + secret positional", mixed(30),
        'client = AcsClient("LT' + 'AI' + mixed(20) + '", "{S}", "cn-hangzhou")')
    add(pt, "netlify nfp_", "nf" + "p_" + mixed(36), "netlify deploy --prod --dir=dist --auth {S}")
    add(pt, "vercel --token", mixed(24), "vercel deploy --prod --yes --token {S}")
    add(pt, "render rnd_", "rn" + "d_" + mixed(32), "env:\n  RENDER_API_KEY: {S}\n  RENDER_SERVICE_ID: srv-cn2k8lmd3nmc73d5e0pg")
    add(pt, "railway token uuid env prefix", uid(), "RAILWAY_TOKEN={S} railway up --service api --detach")
    add(pt, "planetscale pscale_tkn_", "pscale" + "_tkn_" + mixed(43, URLSAFE),
        "pscale deploy-request create orders main --service-token-id 8k2jx0 --service-token {S}")
    add(pt, "neon napi_", "na" + "pi_" + mixed(64, LOWER_DIGITS),
        'curl https://console.neon.tech/api/v2/projects -H "Accept: application/json" -H "Authorization: Bearer {S}"')
    add(pt, "upstash rest token", "AX" + mixed(58, URLSAFE) + "=",
        'const redis = new Redis({\n  url: "https://eu1-ample-gnu-38211.upstash.io",\n  token: "{S}",\n})')
    add(pt, "clerk sk_live_ .env.local", "sk" + "_live_" + mixed(40),
        "NEXT_PUBLIC_CLERK_SIGN_IN_URL=/sign-in\nCLERK_SECRET_KEY={S}")
    add(pt, "twitch irc oauth:", "oauth:" + mixed(30, LOWER_DIGITS), "PASS {S}\nNICK acme_bot\nJOIN #acme")
    add(pt, "asana 2/ pat", "2/" + rnd(DIGITS, 16) + "/" + rnd(DIGITS, 16) + ":" + hexs(32),
        "client = asana.Client.access_token('{S}')")
    add(pt, "auth0 deploy cli config", mixed(64, URLSAFE),
        '{\n  "AUTH0_DOMAIN": "acme.eu.auth0.com",\n  "AUTH0_CLIENT_ID": "' + mixed(32) + '",\n'
        '  "AUTH0_CLIENT_SECRET": "{S}",\n  "AUTH0_ALLOW_DELETE": false\n}')
    add(pt, "algolia admin key positional", hexs(32),
        "const client = algoliasearch('" + rnd(UPPER_DIGITS, 10) + "', '{S}');\nconst index = client.initIndex('products');")
    add(pt, "amplitude curl -u key:secret", hexs(32),
        "curl -u " + hexs(32) + ":{S} 'https://amplitude.com/api/2/export?start=20241101T00&end=20241102T00' -o export.zip")
    add(pt, "rollbar init positional", hexs(32), "rollbar.init('{S}', 'production', code_version='1.4.2')")
    add(pt, "contentful CFPAT-", "CFP" + "AT-" + mixed(43, URLSAFE),
        "contentful space export --space-id 8k2jx0ab1c --management-token {S}")
    add(pt, "sanity sk token", "sk" + mixed(180),
        "export const client = createClient({\n  projectId: 'x8k2jx0a',\n  dataset: 'production',\n"
        "  token: '{S}',\n  useCdn: false,\n})")
    add(pt, "frame.io fio-u-", "fio" + "-u-" + mixed(64, URLSAFE), "FRAMEIO_TOKEN={S} node scripts/upload-dailies.js")
    add(pt, "typeform tfp_", "tf" + "p_" + mixed(59, LOWER_DIGITS + "-_"),
        "const typeformAPI = createClient({ token: '{S}' })")
    intercom = b64("tok:" + uid() + ":1:0")
    add(pt, "intercom dG9rOj", intercom, "intercom = Client(personal_access_token='{S}')")
    add(pt, "zendesk email/token basic", mixed(40),
        "curl https://acme.zendesk.com/api/v2/tickets.json -u dana@acme.dev/token:{S}")
    add(pt, "hubspot pat-na1", "pat-" + "na1-" + uid(), "hubspot_client = HubSpot(access_token='{S}')")
    twitter = "A" * 22 + mixed(4) + "A" * 7 + mixed(10) + "%2B" + mixed(20) + "%3D" + mixed(50)
    add(pt, "twitter app bearer", twitter, 'client = tweepy.Client(bearer_token="{S}")')
    add(pt, "dropbox sl. short-lived", "sl." + "B" + mixed(135, URLSAFE), "dbx = dropbox.Dropbox('{S}')")
    add(pt, "box developer token", mixed(32),
        "auth = OAuth2(client_id=None, client_secret=None, access_token='{S}')\nclient = Client(auth)")
    add(pt, "linode terraform provider", hexs(64), 'provider "linode" {\n  token = "{S}"\n}')
    add(pt, "vultr api key env", mixed(36, UPPER_DIGITS), "export VULTR_API_KEY={S}\nvultr-cli instance list")
    add(pt, "hetzner env prefix", mixed(64),
        "HCLOUD_TOKEN={S} hcloud server create --name ci-runner --type cx22 --image ubuntu-24.04")
    add(pt, "scaleway scw init secret-key", uid(),
        "scw init access-key=SCW" + rnd(UPPER_DIGITS, 17) + " secret-key={S} organization-id=" + uid())
    add(pt, "ovh.conf application_secret", mixed(32),
        "[default]\nendpoint=ovh-eu\n\n[ovh-eu]\napplication_key=" + mixed(16) + "\napplication_secret={S}\n"
        "consumer_key=" + mixed(32))
    add(pt, "yandex yc config set token", "y0" + "_" + mixed(55, URLSAFE), "yc config set token {S}")
    add(pt, "tencent tccli secretKey", mixed(32),
        "tccli configure set secretId AK" + "ID" + mixed(32) + " secretKey {S} region ap-guangzhou")
    add(pt, "huawei sdk sk", mixed(40), "export HUAWEICLOUD_SDK_AK=" + rnd(UPPER_DIGITS, 20) + "\nexport HUAWEICLOUD_SDK_SK={S}")
    add(pt, "ibm cloud --apikey", mixed(44, URLSAFE), "ibmcloud login --apikey {S} -r us-south -g default")
    add(pt, "mongodb atlas digest", uid(),
        'curl --user "' + mixed(8, LOWER_DIGITS) + ':{S}" --digest https://cloud.mongodb.com/api/atlas/v2/groups')
    add(pt, "plaid client kwargs", hexs(30),
        "configuration = plaid.Configuration(host=plaid.Environment.Production,\n"
        "    api_key={'clientId': '" + hexs(24) + "', 'secret': '{S}'})")
    add(pt, "vonage key/secret kwargs", mixed(16), 'client = vonage.Client(key="' + hexs(8) + '", secret="{S}")')
    add(pt, "mailjet auth tuple", hexs(32),
        'mailjet = Client(auth=("' + hexs(32) + '", "{S}"), version="v3.1")')
    add(pt, "notion ntn_", "nt" + "n_" + mixed(46), 'const notion = new Client({ auth: "{S}" })')
    add(pt, "airtable pat", "pat" + mixed(14) + "." + hexs(64),
        'api = Api("{S}")\ntable = api.table("appX8k2jx0ab1cd2e", "Tasks")')
    add(pt, "linear lin_api_", "lin" + "_api_" + mixed(40), 'const linear = new LinearClient({ apiKey: "{S}" })')
    add(pt, "atlassian ATATT in curl -u", "ATATT" + "3xFfGF0" + mixed(170, URLSAFE) + "=" + rnd(UPPER_HEX, 8),
        "curl -u dana@acme.dev:{S} https://acme.atlassian.net/rest/api/3/myself")
    mapbox = "sk." + "ey" + "J1Ijoi" + mixed(60, URLSAFE) + "." + mixed(22, URLSAFE)
    add(pt, "mapbox sk. in gradle.properties", mapbox, "org.gradle.jvmargs=-Xmx2048m\nMAPBOX_DOWNLOADS_TOKEN={S}")
    add(pt, "cloudinary url", mixed(27, URLSAFE), "CLOUDINARY_URL=cloudinary://" + rnd(DIGITS, 15) + ":{S}@acme-media")
    add(pt, "pusher secret kwarg", hexs(20),
        "pusher_client = pusher.Pusher(app_id='1734582', key='" + hexs(20) + "', secret='{S}', cluster='eu', ssl=True)")
    add(pt, "codecov bash -t", uid(), "bash <(curl -s https://codecov.io/bash) -t {S} -f coverage.xml")
    add(pt, "snyk auth uuid", uid(), "snyk auth {S}")
    add(pt, "elevenlabs xi-api-key", "sk" + "_" + hexs(48),
        "curl https://api.elevenlabs.io/v1/voices -H 'xi-api-key: {S}'")
    add(pt, "mistral api_key kwarg", mixed(32), 'client = Mistral(api_key="{S}")')
    add(pt, "perplexity pplx-", "pp" + "lx-" + mixed(48), 'client = OpenAI(api_key="{S}", base_url="https://api.perplexity.ai")')
    add(pt, "deepseek sk-", "sk-" + hexs(32), 'client = OpenAI(api_key="{S}", base_url="https://api.deepseek.com")')
    add(pt, "xai xai-", "xa" + "i-" + mixed(80), "XAI_API_KEY={S}")
    add(pt, "openrouter in continue config", "sk-" + "or-v1-" + hexs(64),
        '{\n  "models": [\n    {\n      "title": "Claude via OpenRouter",\n      "provider": "openrouter",\n'
        '      "model": "anthropic/claude-3.5-sonnet",\n      "apiKey": "{S}"\n    }\n  ]\n}')
    add(pt, "fireworks fw_", "fw" + "_" + mixed(24),
        'llm = Fireworks(api_key="{S}", model="accounts/fireworks/models/llama-v3p1-70b-instruct")')
    add(pt, "wandb login", hexs(40), "wandb login {S}")
    add(pt, "langfuse sk-lf-", "sk-" + "lf-" + uid(),
        'langfuse = Langfuse(public_key="pk-lf-' + uid() + '", secret_key="{S}", host="https://cloud.langfuse.com")')
    add(pt, "digitalocean spaces s3cfg", mixed(43, B64),
        "[default]\naccess_key = DO00" + rnd(UPPER_DIGITS, 16) + "\nhost_base = fra1.digitaloceanspaces.com\n"
        "host_bucket = %(bucket)s.fra1.digitaloceanspaces.com\nsecret_key = {S}")
    add(pt, "backblaze b2 authorize", "K005" + mixed(27, URLSAFE), "b2 account authorize 005" + hexs(22) + " {S}")
    add(pt, "cloudflare r2 rclone.conf", hexs(64),
        "[r2]\ntype = s3\nprovider = Cloudflare\naccess_key_id = " + hexs(32) + "\nsecret_access_key = {S}\n"
        "endpoint = https://" + hexs(32) + ".r2.cloudflarestorage.com")
    add(pt, "influxdb cloud token", mixed(86, URLSAFE) + "==",
        "influx config create --config-name prod --host-url https://eu-central-1-1.aws.cloud2.influxdata.com "
        "--org acme --token {S} --active")
    add(pt, "facebook graph EAA token in url", "EAA" + "G" + mixed(180),
        'requests.get("https://graph.facebook.com/v19.0/me/accounts?access_token={S}")')
    add(pt, "razorpay auth tuple", mixed(24),
        'client = razorpay.Client(auth=("rzp' + '_live_' + mixed(14) + '", "{S}"))')
    add(pt, "paystack php constructor", "sk" + "_live_" + hexs(40), "$paystack = new Yabacon\\Paystack('{S}');")
    add(pt, "flutterwave FLWSECK", "FLWSECK" + "-" + hexs(32) + "-X",
        "const flw = new Flutterwave('FLWPUBK-" + hexs(32) + "-X', '{S}');")
    add(pt, "telnyx KEY_", "KEY" + mixed(32, UPPER_HEX) + "_" + mixed(22, URLSAFE), 'telnyx.api_key = "{S}"')
    add(pt, "slack signing secret flask adapter", hexs(32),
        'slack_events_adapter = SlackEventAdapter("{S}", "/slack/events", app)')

    # ------------------------------------------------------------------ headers and cookies
    hd = "header"
    flask_cookie = ".eJw" + mixed(60, URLSAFE) + "." + mixed(6, URLSAFE) + "." + mixed(27, URLSAFE)
    add(hd, "set-cookie flask session", flask_cookie,
        "HTTP/1.1 302 FOUND\nLocation: /dashboard\nSet-Cookie: session={S}; HttpOnly; Path=/; SameSite=Lax")
    add(hd, "set-cookie express connect.sid", "s%3A" + mixed(32, URLSAFE) + "." + mixed(43, URLSAFE),
        "< HTTP/1.1 200 OK\n< X-Powered-By: Express\n< Set-Cookie: connect.sid={S}; Path=/; HttpOnly")
    add(hd, "set-cookie rails session", mixed(180, B64) + "--" + hexs(40),
        "Set-Cookie: _acme_session={S}; path=/; secure; HttpOnly; SameSite=Lax")
    add(hd, "set-cookie __Host- opaque", mixed(43, URLSAFE),
        "set-cookie: __Host-sid={S}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=1209600")
    jwt_cookie = ("ey" + "JhbGciOiJSUzI1NiIsImtpZCI6IjEifQ." + "ey" + "J" + mixed(90, URLSAFE) + "." + mixed(86, URLSAFE))
    add(hd, "set-cookie jwt access_token", jwt_cookie,
        "Set-Cookie: access_token={S}; Domain=.acme.dev; Path=/; Secure; HttpOnly")
    add(hd, "X-Auth-Token openstack fernet", "gAAAAAB" + mixed(176, URLSAFE),
        'curl -s -H "X-Auth-Token: {S}" https://compute.cloud.example.net:8774/v2.1/servers')
    add(hd, "X-Consul-Token", uid(), 'curl -H "X-Consul-Token: {S}" http://127.0.0.1:8500/v1/kv/app/config?recurse')
    add(hd, "kong apikey header", mixed(32), 'curl -i http://kong.internal:8000/orders -H "apikey: {S}"')
    add(hd, "Ocp-Apim-Subscription-Key", hexs(32),
        'curl "https://acme-apim.azure-api.net/orders/v1/items" -H "Ocp-Apim-Subscription-Key: {S}"')
    add(hd, "X-RapidAPI-Key", mixed(50),
        "headers = {\n    'X-RapidAPI-Key': '{S}',\n    'X-RapidAPI-Host': 'weatherapi-com.p.rapidapi.com'\n}")
    add(hd, "X-Cisco-Meraki-API-Key", hexs(40),
        "curl -L -H 'X-Cisco-Meraki-API-Key: {S}' https://api.meraki.com/api/v1/organizations")
    add(hd, "cloudflare X-Auth-Key global", hexs(37),
        'curl https://api.cloudflare.com/client/v4/zones -H "X-Auth-Email: ops@acme.dev" -H "X-Auth-Key: {S}"')
    add(hd, "cloudflare origin ca X-Auth-User-Service-Key", "v1.0-" + hexs(24) + "-" + hexs(146),
        'curl https://api.cloudflare.com/client/v4/certificates -H "X-Auth-User-Service-Key: {S}"')
    add(hd, "curl --header PRIVATE-TOKEN", mixed(20, URLSAFE),
        'curl --header "PRIVATE-TOKEN: {S}" "https://gitlab.acme.dev/api/v4/projects/42/pipelines?ref=main"')
    add(hd, "basic auth in python dict", b64("svc-reports:" + mixed(16)),
        'headers = {"Authorization": "Basic {S}", "Accept": "application/json"}')
    add(hd, "Proxy-Authorization basic", b64("jdoe:" + mixed(14)),
        "CONNECT api.acme.dev:443 HTTP/1.1\nHost: api.acme.dev:443\nProxy-Authorization: Basic {S}")
    add(hd, "drf Authorization Token httpie", hexs(40), 'http GET :8000/api/orders/ "Authorization: Token {S}"')
    add(hd, "gitea Authorization token", hexs(40),
        "curl -H 'Authorization: token {S}' https://gitea.acme.dev/api/v1/repos/platform/infra/releases")
    add(hd, "yandex Api-Key header", "AQVN" + mixed(36, URLSAFE),
        "curl -H 'Authorization: Api-Key {S}' https://llm.api.cloud.yandex.net/foundationModels/v1/completion")
    add(hd, "deepl auth key", uid() + ":fx",
        "curl -X POST https://api-free.deepl.com/v2/translate -H 'Authorization: DeepL-Auth-Key {S}' -d 'text=Hallo'")
    add(hd, "klaviyo private key pk_", "pk" + "_" + hexs(34),
        "curl https://a.klaviyo.com/api/profiles/ -H 'Authorization: Klaviyo-API-Key {S}' -H 'revision: 2024-10-15'")
    add(hd, "zoho oauthtoken", "1000." + hexs(32) + "." + hexs(32),
        "curl https://www.zohoapis.eu/crm/v6/Leads -H 'Authorization: Zoho-oauthtoken {S}'")
    add(hd, "splunk hec token", uid(),
        "curl -k https://splunk.acme.dev:8088/services/collector/event -H 'Authorization: Splunk {S}' "
        "-d '{\"event\": \"deploy finished\"}'")
    add(hd, "opsgenie GenieKey", uid(),
        "curl -X POST https://api.opsgenie.com/v2/alerts -H 'Authorization: GenieKey {S}' -d @alert.json")
    add(hd, "pagerduty Token token=", "u+" + mixed(18, URLSAFE),
        "curl https://api.pagerduty.com/incidents -H 'Authorization: Token token={S}' "
        "-H 'Accept: application/vnd.pagerduty+json;version=2'")
    add(hd, "elastic ApiKey", b64(mixed(20, URLSAFE) + ":" + mixed(22, URLSAFE)),
        'curl -H "Authorization: ApiKey {S}" https://es.acme.dev:9200/_cat/indices?v')
    add(hd, "godaddy sso-key", mixed(22),
        "curl https://api.godaddy.com/v1/domains -H 'Authorization: sso-key " + mixed(34) + ":{S}'")
    add(hd, "azure openai api-key", hexs(32),
        'curl "https://acme-oai.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2024-06-01" '
        '-H "api-key: {S}" -H "Content-Type: application/json" -d @req.json')
    add(hd, "launchdarkly api- header", "api-" + uid(),
        "curl https://app.launchdarkly.com/api/v2/flags/default -H 'Authorization: {S}'")
    add(hd, "lightstep access token header", mixed(84, B64),
        "OTEL_EXPORTER_OTLP_ENDPOINT=ingest.lightstep.com:443\nOTEL_EXPORTER_OTLP_HEADERS=lightstep-access-token={S}")
    add(hd, "honeycomb otlp headers", mixed(22),
        'OTEL_EXPORTER_OTLP_HEADERS="x-honeycomb-team={S},x-honeycomb-dataset=api"')
    add(hd, "figma X-Figma-Token", "fig" + "d_" + mixed(40, URLSAFE),
        'curl -H "X-Figma-Token: {S}" https://api.figma.com/v1/files/' + mixed(22))
    add(hd, "hasura admin secret", mixed(32),
        'curl https://hasura.acme.dev/v1/graphql -H "X-Hasura-Admin-Secret: {S}" -d @q.json')
    add(hd, "parse master key", mixed(40),
        "curl -X GET -H 'X-Parse-Application-Id: acme' -H 'X-Parse-Master-Key: {S}' https://parse.acme.dev/parse/classes/_User")
    add(hd, "X-Amz-Security-Token raw request", "IQoJb3JpZ2luX2Vj" + mixed(300, B64),
        "GET /acme-logs?list-type=2 HTTP/1.1\nHost: s3.eu-west-1.amazonaws.com\nX-Amz-Date: 20241105T102213Z\n"
        "X-Amz-Security-Token: {S}\nX-Amz-Content-Sha256: UNSIGNED-PAYLOAD")

    # ------------------------------------------------------------------ key material without armour
    km = "key-material"

    def urand(n: int) -> str:
        return mixed(n, URLSAFE)

    jwk = {"kty": "RSA", "kid": "signing-2024-11", "use": "sig", "alg": "RS256", "n": urand(342), "e": "AQAB",
           "d": urand(342), "p": urand(171), "q": urand(171), "dp": urand(171), "dq": urand(171), "qi": urand(171)}
    put(km, "jwk rsa private", json.dumps(jwk), jwk["d"])
    jwk_ec = {"kty": "EC", "crv": "P-256", "kid": "es256-1", "x": urand(43), "y": urand(43), "d": urand(43)}
    put(km, "jwk ec private", json.dumps(jwk_ec, indent=2), jwk_ec["d"])
    jwk_okp = {"kty": "OKP", "crv": "Ed25519", "d": urand(43), "x": urand(43)}
    put(km, "jwk okp ed25519 private", "const key = await importJWK(" + json.dumps(jwk_okp) + ", 'EdDSA')", jwk_okp["d"])
    jwk_oct = {"kty": "oct", "kid": "hmac-2024", "alg": "HS256", "k": urand(43)}
    put(km, "jwks oct symmetric", json.dumps({"keys": [jwk_oct]}, indent=2), jwk_oct["k"])

    ssh_label = "OPENSSH PRIVATE KEY"
    ssh_text = (begin(ssh_label) + "\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                + "\n".join(rnd(B64, 70) for _ in range(5)) + "\n" + end(ssh_label) + "\n")
    ssh_blob = b64(ssh_text)
    assert ssh_blob.startswith("LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K")
    add(km, "openssh key base64 blob", ssh_blob[200:280],
        'echo "{A}" | base64 -d > ~/.ssh/id_ed25519 && chmod 600 ~/.ssh/id_ed25519', A=ssh_blob)

    ppk3_private = "AAAAI" + mixed(43, B64)
    ppk3 = ("PuTTY-User-Key-File-" + "3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20241105\nPublic-Lines: 2\n"
            + "AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd(B64, 39) + "\n" + rnd(B64, 3) + "=\nPrivate-Lines: 1\n"
            + ppk3_private + "\nPrivate-MAC: " + hexs(64) + "\n")
    put(km, "putty ppk v3 ed25519", ppk3, ppk3_private)
    ppk2_private = [rnd(B64, 64) for _ in range(14)]
    ppk2 = ("PuTTY-User-Key-File-" + "2: ssh-rsa\nEncryption: none\nComment: rsa-key-20240311\nPublic-Lines: 6\n"
            + "AAAAB3NzaC1yc2EAAAABJQAAAQEA" + rnd(B64, 36) + "\n" + "\n".join(rnd(B64, 64) for _ in range(4))
            + "\n" + rnd(B64, 40) + "\nPrivate-Lines: 14\n" + "\n".join(ppk2_private) + "\nPrivate-MAC: " + hexs(40) + "\n")
    put(km, "putty ppk v2 rsa", ppk2, ppk2_private[5])
    ssh2_lines = ["P2/56wAAA+" + rnd(B64, 60)] + [rnd(B64, 70) for _ in range(11)] + [rnd(B64, 30) + "=="]
    ssh2 = ("---- BEGIN SSH2 " + "ENCRYPTED PRIVATE KEY ----\n" + 'Comment: "rsa-key-20231002"\n' + "\n".join(ssh2_lines)
            + "\n---- END SSH2 " + "ENCRYPTED PRIVATE KEY ----")
    put(km, "rfc4716 ssh2 encrypted private key", ssh2, ssh2_lines[6])

    rsa_label = "RSA PRIVATE KEY"
    tf_lines = ["MIIEowIBAAKCAQEA" + rnd(B64, 48)] + [rnd(B64, 64) for _ in range(20)] + [rnd(B64, 28) + "=="]
    tf_pem = begin(rsa_label) + "\\n" + "\\n".join(tf_lines) + "\\n" + end(rsa_label) + "\\n"
    put(km, "pem in terraform state json",
        '{\n  "mode": "managed",\n  "type": "tls_private_key",\n  "name": "deploy",\n  "instances": [\n    {\n'
        '      "attributes": {\n        "algorithm": "RSA",\n        "private_key_pem": "' + tf_pem + '",\n'
        '        "rsa_bits": 2048\n      }\n    }\n  ]\n}', tf_lines[7])
    ec_label = "EC PRIVATE KEY"
    ec_lines = ["MHcCAQEEI" + rnd(B64, 55), rnd(B64, 64), rnd(B64, 60) + "=="]
    put(km, "pem in helm values block scalar",
        "ingress:\n  enabled: true\n  tls:\n    crt: |\n      (see cert.pem)\n    key: |\n      " + begin(ec_label) + "\n"
        + "\n".join("      " + line for line in ec_lines) + "\n      " + end(ec_label) + "\n", ec_lines[1])
    p8_label = "PRIVATE KEY"
    p8_lines = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + rnd(B64, 14)] + [rnd(B64, 64) for _ in range(24)]
    put(km, "pem in .env with literal \\n",
        'FIREBASE_PROJECT_ID=acme-prod\nFIREBASE_CLIENT_EMAIL=firebase-adminsdk-x1@acme-prod.iam.gserviceaccount.com\n'
        'FIREBASE_PRIVATE_KEY="' + begin(p8_label) + "\\n" + "\\n".join(p8_lines) + "\\n" + end(p8_label) + '\\n"',
        p8_lines[9])
    der = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ" + rnd(B64, 1500)
    add(km, "pkcs8 der base64 in java", der[400:480],
        'PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(\n'
        '    new PKCS8EncodedKeySpec(Base64.getDecoder().decode("{A}")));', A=der)
    kube_pem = (begin(rsa_label) + "\n" + "MIIEpAIBAAKCAQEA" + rnd(B64, 48) + "\n"
                + "\n".join(rnd(B64, 64) for _ in range(20)) + "\n" + end(rsa_label) + "\n")
    kube_blob = b64(kube_pem)
    add(km, "kubeconfig client-key-data", kube_blob[240:320],
        "users:\n- name: kind-dev\n  user:\n    client-certificate-data: " + b64("cert:" + rnd(B64, 90))
        + "\n    client-key-data: {A}", A=kube_blob)
    xml_key = {tag: rnd(B64, size - 2) + "==" for tag, size in
               (("Modulus", 344), ("P", 172), ("Q", 172), ("DP", 172), ("DQ", 172), ("InverseQ", 172), ("D", 344))}
    put(km, ".NET RSAKeyValue xml",
        "<RSAKeyValue><Modulus>" + xml_key["Modulus"] + "</Modulus><Exponent>AQAB</Exponent><P>" + xml_key["P"]
        + "</P><Q>" + xml_key["Q"] + "</Q><DP>" + xml_key["DP"] + "</DP><DQ>" + xml_key["DQ"] + "</DQ><InverseQ>"
        + xml_key["InverseQ"] + "</InverseQ><D>" + xml_key["D"] + "</D></RSAKeyValue>", xml_key["D"])
    cosign_label = "ENCRYPTED SIGSTORE PRIVATE KEY"
    cosign_json = json.dumps({"kdf": {"name": "scrypt", "params": {"N": 65536, "r": 8, "p": 1}, "salt": b64(raw(32))},
                              "cipher": {"name": "nacl/secretbox", "nonce": b64(raw(24))}, "ciphertext": b64(raw(120))})
    cosign_lines = wrap(b64(cosign_json))
    put(km, "cosign encrypted sigstore key",
        "$ cat cosign.key\n" + begin(cosign_label) + "\n" + "\n".join(cosign_lines) + "\n" + end(cosign_label),
        cosign_lines[-2])
    minisign = "RWRTY0Iy" + mixed(204, B64)
    add(km, "minisign secret key file", minisign, "untrusted comment: minisign encrypted secret key\n{S}")
    signify = "RWRCSwAAAA" + mixed(142, B64) + "=="
    add(km, "signify secret key file", signify, "$ cat release.sec\nuntrusted comment: signify secret key\n{S}")
    tink = b64(b"\x1a\x20" + raw(32))
    add(km, "tink cleartext keyset", tink,
        '{"primaryKeyId":1931667682,"key":[{"keyData":{"typeUrl":"type.googleapis.com/google.crypto.tink.AesGcmKey",'
        '"value":"{S}","keyMaterialType":"SYMMETRIC"},"status":"ENABLED","keyId":1931667682,"outputPrefixType":"TINK"}]}')
    add(km, "wireguard PrivateKey", b64(raw(32)),
        "[Interface]\nPrivateKey = {S}\nAddress = 10.8.0.2/24\nDNS = 1.1.1.1\n\n[Peer]\nPublicKey = "
        + b64(raw(32)) + "\nAllowedIPs = 0.0.0.0/0\nEndpoint = vpn.acme.dev:51820")
    add(km, "wireguard PresharedKey", b64(raw(32)),
        "[Peer]\n# office gateway\nPublicKey = " + b64(raw(32)) + "\nPresharedKey = {S}\nAllowedIPs = 10.10.0.0/16\n"
        "PersistentKeepalive = 25")
    add(km, "ethereum private key hardhat", "0x" + hexs(64),
        'networks: {\n    sepolia: {\n      url: "https://sepolia.infura.io/v3/" + process.env.INFURA_ID,\n'
        '      accounts: ["{S}"],\n    },\n  },')
    solana = ",".join(str(_rng.randrange(256)) for _ in range(64))
    add(km, "solana keypair json array", solana, "$ cat ~/.config/solana/id.json\n[{S}]")
    add(km, "bitcoin wif private key", _rng.choice("KL") + mixed(51, BASE58),
        'bitcoin-cli -rpcwallet=cold importprivkey "{S}" "cold-2019" false')
    mnemonic = " ".join(_rng.choice(BIP39_WORDS) for _ in range(12))
    add(km, "bip39 mnemonic phrase", mnemonic, 'const wallet = ethers.Wallet.fromPhrase("{S}");')
    add(km, "sslkeylogfile CLIENT_RANDOM", hexs(96),
        "$ head -1 /tmp/sslkeys.log\nCLIENT_RANDOM " + hexs(64) + " {S}")
    add(km, "rails master.key cat", hexs(32), "$ cat config/master.key\n{S}")
    add(km, "laravel APP_KEY base64:", mixed(43, B64) + "=",
        "APP_NAME=Acme\nAPP_ENV=production\nAPP_KEY=base64:{S}\nAPP_DEBUG=false")
    add(km, "airflow.cfg fernet_key", mixed(43, URLSAFE) + "=",
        "[core]\nexecutor = CeleryExecutor\nfernet_key = {S}\nload_examples = False")
    django_chars = "abcdefghijklmnopqrstuvwxyz0123456789!@#$%^&*(-_=+)"
    add(km, "django SECRET_KEY insecure", "django-insecure-" + mixed(50, django_chars),
        "# SECURITY WARNING: keep the secret key used in production secret!\nSECRET_KEY = '{S}'")
    wp_chars = ALNUM + "!#$%&()*+,-./:;<=>?@[]^_`|~ "
    add(km, "wordpress AUTH_KEY salt", mixed(64, wp_chars), "define( 'AUTH_KEY',         '{S}' );")
    add(km, "ENCRYPTION_KEY hex env", hexs(64), "ENCRYPTION_KEY={S}\nENCRYPTION_ALGO=aes-256-gcm")

    # ------------------------------------------------------------------ urls and logs
    ul = "url-and-log"
    add(ul, "urllib HTTPError appid", hexs(32),
        "urllib.error.HTTPError: HTTP Error 401: Unauthorized for url: "
        "https://api.openweathermap.org/data/2.5/weather?q=Paris&appid={S}")
    add(ul, "access log oauth code", mixed(40, URLSAFE),
        '10.0.3.7 - - [05/Nov/2024:10:22:13 +0000] "GET /oauth/callback?code={S}&state=xyz HTTP/1.1" 302 0 "-" "Mozilla/5.0"')
    add(ul, "access log refresh token", mixed(48, URLSAFE),
        '172.18.0.4 - - [05/Nov/2024:10:22:14 +0000] "POST /api/session?refresh={S} HTTP/1.1" 200 512 "-" "okhttp/4.12.0"')
    add(ul, "sftp url duplicity", mixed(16), "duplicity /var/www sftp://backup:{S}@bk.example.net//srv/backups/www")
    add(ul, "smb url with domain", mixed(14), "smb://CORP;svc_scan:{S}@fileserver01/scans")
    add(ul, "ldaps url userinfo", mixed(16), "LDAP_URI=ldaps://svc-ldap:{S}@dc01.corp.acme.dev:636/dc=corp,dc=acme,dc=dev")
    add(ul, "rediss url celery", mixed(32),
        "CELERY_BROKER_URL=rediss://default:{S}@redis-12345.c1.eu-west-1-2.ec2.redns.redis-cloud.com:12345/0"
        "?ssl_cert_reqs=required")
    add(ul, "sqlserver url go", mixed(16), 'db, err := sql.Open("sqlserver", "sqlserver://sa:{S}@localhost:1433?database=orders")')
    add(ul, "clickhouse url", mixed(16), "CLICKHOUSE_URL=clickhouse://default:{S}@ch.internal:9000/analytics?secure=false")
    add(ul, "nats url", mixed(18), 'nc, _ := nats.Connect("nats://orders:{S}@nats.internal:4222")')
    add(ul, "ftp url curl -T", mixed(14), "curl -T backup.tar.gz ftp://ftpuser:{S}@ftp.example.org/incoming/")
    add(ul, "https proxy url", "Autumn-2024-proxy", "export HTTPS_PROXY=http://jdoe:{S}@proxy.corp.acme.dev:3128")
    add(ul, "git fatal unable to access", mixed(20, URLSAFE),
        "fatal: unable to access 'https://oauth2:{S}@gitlab.acme.dev/platform/infra.git/': "
        "Could not resolve host: gitlab.acme.dev")
    add(ul, "jupyter server list token", hexs(48),
        "$ jupyter server list\nCurrently running servers:\nhttp://localhost:8888/?token={S} :: /home/dana/notebooks")
    add(ul, "otpauth totp uri", mixed(32, BASE32),
        "otpauth://totp/Acme:dana%40acme.dev?secret={S}&issuer=Acme&algorithm=SHA1&digits=6&period=30")
    add(ul, "conda /t/ token channel", "ac-" + mixed(30, URLSAFE),
        "channels:\n  - https://conda.anaconda.org/t/{S}/acme-private\n  - conda-forge")
    add(ul, "requirements git+https oauth2", mixed(20, URLSAFE),
        "requests==2.32.3\nacme-internal @ git+https://oauth2:{S}@gitlab.acme.dev/platform/acme-internal.git@v2.3.0")
    add(ul, "rtsp camera url", "blue-Falcon-42",
        'ffmpeg -i "rtsp://admin:{S}@192.168.1.64:554/Streaming/Channels/101" -c copy -t 60 clip.mp4')
    add(ul, "mqtts url", mixed(16), "const client = mqtt.connect('mqtts://sensor01:{S}@broker.hivemq.cloud:8883')")
    add(ul, "socks5h proxy url", mixed(18), "ALL_PROXY=socks5h://scraper:{S}@gate.proxy-provider.net:7000")
    add(ul, "smtp+tls EMAIL_URL", mixed(32, HEX) + "-" + hexs(8) + "-" + hexs(8),
        "EMAIL_URL=smtp+tls://postmaster@mg.acme.dev:{S}@smtp.mailgun.org:587")
    add(ul, "neo4j bolt url", mixed(16), 'driver = GraphDatabase.driver("bolt://neo4j:{S}@localhost:7687")')
    add(ul, "azure function code=", mixed(54, URLSAFE) + "==",
        "curl 'https://acme-jobs.azurewebsites.net/api/ReindexTrigger?code={S}' -d '{\"full\": true}'")
    add(ul, "azure queue sas sig", mixed(43, B64).replace("+", "%2B").replace("/", "%2F") + "%3D",
        "https://acmedata.queue.core.windows.net/orders/messages?sv=2022-11-02&se=2025-01-01T00%3A00%3A00Z&sp=a&sig={S}")
    add(ul, "mattermost incoming webhook", mixed(26, LOWER_DIGITS),
        "curl -i -X POST -H 'Content-Type: application/json' -d '{\"text\": \"deploy done\"}' "
        "https://chat.acme.dev/hooks/{S}")
    add(ul, "google chat webhook token", mixed(43, URLSAFE) + "%3D",
        "https://chat.googleapis.com/v1/spaces/AAAA" + mixed(7, URLSAFE) + "/messages?key=AI" + "za" + "Sy"
        + mixed(33, URLSAFE) + "&token={S}")
    add(ul, "ifttt maker key", mixed(22, URLSAFE), "https://maker.ifttt.com/trigger/backup_failed/with/key/{S}")
    add(ul, "urllib3 debug log apikey", mixed(32),
        'DEBUG:urllib3.connectionpool:https://api.acme-weather.com:443 "GET /v2/forecast?lat=48.85&lon=2.35&apikey={S} '
        'HTTP/1.1" 200 5120')
    add(ul, "nginx error log password query", mixed(14),
        '2024/11/05 10:22:13 [error] 31#31: *4 upstream timed out, client: 10.0.0.5, server: acme.dev, '
        'request: "POST /login?user=dana&password={S} HTTP/1.1", upstream: "http://127.0.0.1:8000/login"')
    add(ul, "http.client send bytes", mixed(32),
        "send: b'GET /v1/orders HTTP/1.1\\r\\nHost: api.acme.dev\\r\\nX-Api-Token: {S}\\r\\nAccept: */*\\r\\n\\r\\n'")
    add(ul, "oauth implicit fragment", mixed(40, URLSAFE),
        "Navigated to https://app.acme.dev/callback#access_token={S}&token_type=Bearer&expires_in=3600&state=af0ifjsldkj")
    add(ul, "magic link email", mixed(43, URLSAFE),
        "Click the link below to sign in:\nhttps://app.acme.dev/auth/magic?token={S}\nThis link expires in 15 minutes.")
    add(ul, "reset password token log", mixed(40, HEX),
        '10.0.0.12 - - [05/Nov/2024:09:01:44 +0000] "GET /reset-password?token={S} HTTP/1.1" 200 3190')
    add(ul, "rails log api_key param", mixed(32),
        'Started GET "/api/v1/export?api_key={S}&format=csv" for 10.0.0.7 at 2024-11-05 10:22:13 +0000')
    add(ul, "heroku router log secret param", mixed(24),
        'at=info method=POST path="/hooks/billing?secret={S}" host=acme-api.herokuapp.com request_id='
        + uid() + ' fwd="3.18.12.63" dyno=web.1 connect=0ms service=41ms status=200 bytes=245')
    add(ul, "websocket url token console error", mixed(40, URLSAFE),
        "WebSocket connection to 'wss://stream.acme.dev/v1/ws?token={S}' failed: Error during WebSocket handshake")
    add(ul, ".git-credentials line", mixed(20), "https://jdoe:{S}@github.com\nhttps://oauth2:x@gitlab.com")
    add(ul, "pip.conf gitlab __token__", mixed(20, URLSAFE),
        "[global]\nindex-url = https://__token__:{S}@gitlab.acme.dev/api/v4/projects/42/packages/pypi/simple\n"
        "timeout = 60")

    # ------------------------------------------------------------------ encoded
    en = "encoded"
    env_blob = b64("DEBUG=false\nSECRET_KEY=" + mixed(40) + "\nDATABASE_URL=postgres://app:" + mixed(16) + "@db/app\n")
    add(en, "echo base64 .env | base64 -d", env_blob, "echo {S} | base64 -d > .env")
    add(en, "kubectl get secret -o yaml data", b64(mixed(20)),
        "apiVersion: v1\ndata:\n  password: {S}\n  username: " + b64("app") + "\nkind: Secret\nmetadata:\n"
        "  name: db-creds\n  namespace: prod\ntype: Opaque")
    add(en, "k8s secret manifest data api-key", b64(mixed(32)),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: payments\ntype: Opaque\ndata:\n  api-key: {S}")
    dockerconfig = json.dumps({"auths": {"registry.gitlab.com": {"auth": b64("deployer:" + mixed(20, URLSAFE))}}})
    add(en, ".dockerconfigjson base64", b64(dockerconfig),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: regcred\ntype: kubernetes.io/dockerconfigjson\ndata:\n"
        "  .dockerconfigjson: {S}")
    add(en, "docker config.json ghcr auth", b64("jdoe:" + mixed(40)),
        '{\n\t"auths": {\n\t\t"ghcr.io": {\n\t\t\t"auth": "{S}"\n\t\t}\n\t}\n}')
    add(en, "smtp AUTH LOGIN transcript", b64(mixed(16)),
        "EHLO dev.local\n250-smtp.acme.dev\n250 AUTH LOGIN PLAIN\nAUTH LOGIN\n334 VXNlcm5hbWU6\n"
        + b64("alerts@acme.dev") + "\n334 UGFzc3dvcmQ6\n{S}\n235 2.7.0 Authentication successful")
    add(en, "smtp AUTH PLAIN", b64("\0alerts@acme.dev\0" + mixed(16)), "AUTH PLAIN {S}\n235 2.7.0 Accepted")
    add(en, "percent-encoded password in url", mixed(6) + "%40" + mixed(6) + "%2F" + mixed(6),
        "SQLALCHEMY_DATABASE_URI=postgresql+psycopg://app:{S}@db.internal:5432/app")
    add(en, "url-encoded password%3D in redirect", mixed(16),
        "302 Location: /login?next=%2Fsetup%3Fuser%3Dadmin%26password%3D{S}%26step%3D2")
    add(en, "npmrc _password base64", b64(mixed(18)),
        "registry=https://nexus.acme.dev/repository/npm-group/\n//nexus.acme.dev/repository/npm-group/:username=ci\n"
        "//nexus.acme.dev/repository/npm-group/:_password={S}\n//nexus.acme.dev/repository/npm-group/:email=ci@acme.dev")
    add(en, "consul kv export base64 value", b64(mixed(24)),
        '[\n  {\n    "key": "app/db/password",\n    "flags": 0,\n    "value": "{S}"\n  }\n]')
    add(en, "git config extraheader basic", b64("x-access-token:" + "gh" + "s_" + mixed(36)),
        "$ git config --list --show-origin | grep extraheader\n"
        "file:.git/config\thttp.https://github.com/.extraheader=AUTHORIZATION: basic {S}")

    # ------------------------------------------------------------------ assignments in config and code
    asg = "assignment"
    add(asg, ".env STRIPE_LIVE", mixed(32), "STRIPE_MODE=live\nSTRIPE_LIVE={S}\nSTRIPE_CURRENCY=eur")
    add(asg, "hcl provider datadog", hexs(32),
        'provider "datadog" {\n  api_key = "{S}"\n  app_key = var.datadog_app_key\n  api_url = "https://api.datadoghq.eu/"\n}')
    add(asg, "ini pass key", mixed(16), "[database]\nhost = db.internal\nuser = app\npass = {S}\nname = app")
    add(asg, "toml api_token", mixed(40, URLSAFE), '[auth]\nendpoint = "https://api.acme.dev"\napi_token = "{S}"')
    add(asg, "spring properties datasource password", mixed(18),
        "spring.datasource.url=jdbc:postgresql://db:5432/orders\nspring.datasource.username=orders\n"
        "spring.datasource.password={S}")
    add(asg, "spring yaml nested password", mixed(18),
        "spring:\n  datasource:\n    url: jdbc:mysql://db:3306/shop\n    username: shop\n    password: {S}\n"
        "  jpa:\n    open-in-view: false")
    add(asg, "docker-compose env list", mixed(20),
        "services:\n  db:\n    image: postgres:16\n    environment:\n      - POSTGRES_USER=app\n"
        "      - POSTGRES_PASSWORD={S}\n      - POSTGRES_DB=app")
    add(asg, "docker-compose env map", mixed(20),
        "  mysql:\n    image: mysql:8.4\n    environment:\n      MYSQL_DATABASE: shop\n      MYSQL_ROOT_PASSWORD: {S}")
    add(asg, "helm values nested auth", mixed(20),
        "postgresql:\n  enabled: true\n  auth:\n    username: app\n    database: app\n    postgresPassword: {S}")
    add(asg, "github actions with token", mixed(40),
        "      - uses: expo/expo-github-action@v8\n        with:\n          eas-version: latest\n          token: {S}")
    add(asg, "dockerfile ENV", mixed(36), "FROM node:20-alpine\nWORKDIR /app\nENV NPM_TOKEN={S}\nRUN npm ci")
    add(asg, "dockerfile ARG default", mixed(36), "ARG GITHUB_TOKEN={S}\nRUN git clone https://${GITHUB_TOKEN}@github.com/acme/sdk.git")
    add(asg, "makefile export :=", mixed(24),
        "export TWINE_USERNAME := __token__\nexport TWINE_PASSWORD := {S}\n\nrelease:\n\ttwine upload dist/*")
    add(asg, "systemd Environment=", mixed(32),
        "[Service]\nExecStart=/usr/local/bin/worker\nEnvironment=\"API_SECRET={S}\"\nRestart=always")
    add(asg, "supervisord environment=", mixed(40),
        '[program:web]\ncommand=gunicorn app:app\nenvironment=DJANGO_SETTINGS_MODULE="app.settings",SECRET_KEY="{S}"')
    add(asg, "nginx proxy_set_header authorization", mixed(40, URLSAFE),
        "location /api/ {\n    proxy_pass http://upstream_api;\n    proxy_set_header Authorization \"Bearer {S}\";\n}")
    add(asg, "apache AuthLDAPBindPassword", mixed(16),
        'AuthLDAPURL "ldap://ldap.corp:389/ou=people,dc=corp?uid"\nAuthLDAPBindDN "cn=apache,ou=svc,dc=corp"\n'
        'AuthLDAPBindPassword "{S}"')
    add(asg, "haproxy insecure-password", mixed(16), "userlist admins\n    user admin insecure-password {S}")
    add(asg, "redis.conf requirepass", mixed(32), "bind 0.0.0.0\nport 6379\nrequirepass {S}\nmaxmemory 2gb")
    add(asg, "redis.conf masterauth", mixed(32), "replicaof 10.0.2.10 6379\nmasterauth {S}")
    add(asg, "rabbitmq.conf default_pass", mixed(20), "default_user = orders\ndefault_pass = {S}\nlisteners.tcp.default = 5672")
    add(asg, "kibana.yml elasticsearch.password", mixed(20),
        'elasticsearch.hosts: ["https://es01:9200"]\nelasticsearch.username: "kibana_system"\nelasticsearch.password: "{S}"')
    add(asg, "grafana.ini admin_password", mixed(16), "[security]\nadmin_user = admin\nadmin_password = {S}")
    add(asg, "prometheus scrape basic_auth", mixed(20),
        "scrape_configs:\n  - job_name: node\n    basic_auth:\n      username: prom\n      password: {S}\n"
        "    static_configs:\n      - targets: ['10.0.0.5:9100']")
    add(asg, "alertmanager smtp_auth_password", mixed(16),
        "global:\n  smtp_smarthost: 'smtp.acme.dev:587'\n  smtp_auth_username: 'alerts@acme.dev'\n  smtp_auth_password: '{S}'")
    add(asg, "jenkins casc string credential", mixed(32),
        "credentials:\n  system:\n    domainCredentials:\n      - credentials:\n          - string:\n"
        "              id: slack-webhook\n              scope: GLOBAL\n              secret: \"{S}\"")
    add(asg, "rails storage.yml secret_access_key", mixed(40, B64),
        "amazon:\n  service: S3\n  access_key_id: AK" + "IA" + rnd(UPPER_DIGITS, 16) + "\n  secret_access_key: {S}\n"
        "  region: eu-west-1\n  bucket: acme-uploads")
    add(asg, "django DATABASES dict", mixed(18),
        "DATABASES = {\n    'default': {\n        'ENGINE': 'django.db.backends.postgresql',\n        'NAME': 'app',\n"
        "        'USER': 'app',\n        'PASSWORD': '{S}',\n        'HOST': 'db',\n    }\n}")
    add(asg, "rust let api key", mixed(40), 'let api_key = "{S}";\nlet client = reqwest::Client::new();')
    add(asg, "csharp const string", mixed(32), 'private const string ApiKey = "{S}";')
    add(asg, "java static final", mixed(40, URLSAFE), 'private static final String CLIENT_SECRET = "{S}";')
    add(asg, "kotlin const val", mixed(32), 'const val SIGNING_SECRET = "{S}"')
    add(asg, "swift let", mixed(32), 'let apiKey = "{S}"\nlet url = URL(string: "https://api.acme.dev/v1/items")!')
    add(asg, "ansible inventory ansible_password", mixed(14),
        "[windows]\nwin01.corp.local ansible_user=Administrator ansible_password={S} ansible_connection=winrm")
    add(asg, "packer winrm_password", mixed(16),
        'source "azure-arm" "win" {\n  communicator   = "winrm"\n  winrm_username = "packer"\n  winrm_password = "{S}"\n}')
    add(asg, "pulumi config plaintext", mixed(20),
        "config:\n  aws:region: eu-west-1\n  acme-infra:dbPassword: {S}")
    add(asg, "serverless.yml environment", mixed(32),
        "provider:\n  name: aws\n  runtime: nodejs20.x\n  environment:\n    WEBHOOK_SECRET: {S}")
    add(asg, "netlify.toml build environment", mixed(32),
        '[build]\n  command = "npm run build"\n[build.environment]\n  CMS_API_SECRET = "{S}"')
    add(asg, "wrangler.toml vars", mixed(32), 'name = "edge-api"\nmain = "src/index.ts"\n\n[vars]\nUPSTREAM_TOKEN = "{S}"')
    add(asg, "aws credentials profile session token", "IQoJb3JpZ2luX2Vj" + mixed(280, B64),
        "[sso-dev]\naws_access_key_id = AS" + "IA" + rnd(UPPER_DIGITS, 16) + "\naws_secret_access_key = "
        + mixed(40, B64) + "\naws_session_token = {S}")
    add(asg, ".boto gs_secret_access_key", mixed(40, B64),
        "[Credentials]\ngs_access_key_id = GOOG1E" + rnd(UPPER_DIGITS, 55) + "\ngs_secret_access_key = {S}")
    add(asg, "gh hosts.yml oauth_token", "gh" + "o_" + mixed(36),
        "github.com:\n    user: jdoe\n    oauth_token: {S}\n    git_protocol: https")
    add(asg, "kubeconfig user token", mixed(64, URLSAFE),
        "users:\n- name: ci-deployer\n  user:\n    token: {S}")
    add(asg, "my.cnf client password", mixed(16), "[client]\nuser=root\npassword={S}\nhost=127.0.0.1")
    add(asg, "cargo credentials token", mixed(32), '[registries.acme]\ntoken = "{S}"')
    add(asg, ".pypirc human password", "P@ssw0rd2024!",
        "[distutils]\nindex-servers = corp\n\n[corp]\nrepository = https://pypi.acme.dev/\nusername = alice\npassword = {S}")
    add(asg, "composer auth.json http-basic", mixed(40),
        '{\n    "http-basic": {\n        "repo.packagist.com": {\n            "username": "token",\n'
        '            "password": "{S}"\n        }\n    }\n}')
    add(asg, ".yarnrc.yml npmAuthToken", mixed(36),
        'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.pkg.acme.dev"\n    npmAuthToken: "{S}"')
    add(asg, "gradle.properties artifactory password", mixed(64, URLSAFE),
        "artifactory_user=ci\nartifactory_password={S}\norg.gradle.parallel=true")
    add(asg, "gradle signingConfigs storePassword", mixed(16),
        'signingConfigs {\n    release {\n        storeFile file("release.jks")\n        storePassword "{S}"\n'
        '        keyAlias "upload"\n    }\n}')
    add(asg, "powershell $env: assignment", mixed(40), '$env:ACME_API_SECRET = "{S}"\n.\\scripts\\sync.ps1')
    add(asg, "python os.environ assignment", mixed(40), 'os.environ["WEATHER_API_KEY"] = "{S}"')
    add(asg, "sssd ldap_default_authtok", mixed(16),
        "[domain/corp]\nldap_uri = ldaps://dc01.corp\nldap_default_bind_dn = cn=sssd,ou=svc,dc=corp\nldap_default_authtok = {S}")
    add(asg, "gmail app password spaced", " ".join(rnd(string.ascii_lowercase, 4) for _ in range(4)),
        "EMAIL_HOST = 'smtp.gmail.com'\nEMAIL_HOST_USER = 'alerts.acme@gmail.com'\nEMAIL_HOST_PASSWORD = '{S}'")
    add(asg, "elixir config keyword", mixed(20),
        'config :acme, Acme.Repo,\n  username: "postgres",\n  password: "{S}",\n  hostname: "localhost"')

    # ------------------------------------------------------------------ reprs
    rp = "repr"
    add(rp, "python bytes repr client_secret", mixed(32),
        "{'client_id': 'web-portal', 'client_secret': b'{S}', 'scope': 'openid profile'}")
    add(rp, "ruby hash rocket", mixed(20),
        'config.action_mailer.smtp_settings = {\n  :address => "smtp.acme.dev",\n  :user_name => "mailer",\n'
        '  :password => "{S}"\n}')
    add(rp, "rails console inspect otp_secret", mixed(32, BASE32),
        '#<User id: 42, email: "dana@acme.dev", otp_secret: "{S}", created_at: "2024-03-11 08:01:22.000000000 +0000">')
    add(rp, "node util.inspect object", mixed(32), "{\n  clientId: 'web-portal',\n  apiSecret: '{S}',\n  retries: 3\n}")
    add(rp, "python dataclass repr", mixed(18), "Config(db_host='db.internal', db_port=5432, db_password='{S}', debug=False)")
    add(rp, "python namedtuple repr", mixed(16), "Credentials(username='svc-backup', password='{S}')")
    add(rp, "argparse Namespace repr", mixed(16), "Namespace(host='db.internal', user='admin', password='{S}', verbose=False)")
    pw = mixed(16)
    add(rp, "php print_r", pw, "Array\n(\n    [host] => db.internal\n    [user] => app\n    [pass] => {S}\n)")
    pw = mixed(18)
    add(rp, "php var_dump", pw,
        'array(2) {\n  ["host"]=>\n  string(11) "db.internal"\n  ["password"]=>\n  string(' + str(len(pw)) + ') "{S}"\n}')
    add(rp, "go %+v struct", mixed(18), "config: {Host:db.internal Port:5432 User:app Password:{S} SSLMode:require}")
    add(rp, "go %#v struct", mixed(32), '&main.Config{Endpoint:"https://api.acme.dev", APIKey:"{S}", Timeout:30000000000}')
    add(rp, "rust debug struct", mixed(40), 'Settings { database_url: "postgres://db/app", api_token: "{S}", workers: 4 }')
    add(rp, "java toString", mixed(18),
        "DataSourceProperties{url='jdbc:postgresql://db:5432/app', username='app', password='{S}'}")
    add(rp, "kotlin data class toString", mixed(24), "SmtpConfig(host=smtp.acme.dev, port=587, user=mailer, secret={S})")
    add(rp, "csharp record ToString", mixed(32), "ApiOptions { BaseUrl = https://api.acme.dev, ApiKey = {S}, Retries = 3 }")
    add(rp, "elixir map inspect", mixed(20), '%{database: "app_prod", hostname: "db", password: "{S}", pool_size: 10}')
    add(rp, "perl Data::Dumper", mixed(16), "$VAR1 = {\n          'dbuser' => 'app',\n          'dbpass' => '{S}'\n        };")
    add(rp, "python os.environ repr", hexs(32),
        "environ({'HOME': '/root', 'PATH': '/usr/local/bin:/usr/bin', 'SLACK_SIGNING_SECRET': '{S}'})")
    add(rp, "requests CaseInsensitiveDict headers", mixed(32),
        "{'User-Agent': 'python-requests/2.32.3', 'Accept-Encoding': 'gzip, deflate', 'Accept': '*/*', "
        "'Connection': 'keep-alive', 'X-Api-Token': '{S}'}")
    add(rp, "lua table", mixed(20), 'local config = { host = "127.0.0.1", port = 6379, auth_password = "{S}" }')
    add(rp, "clojure map", mixed(20), '{:db-user "app", :db-password "{S}", :db-host "db"}')
    add(rp, "haskell record show", mixed(32), 'Config {cfgHost = "api.acme.dev", cfgApiKey = "{S}", cfgRetries = 3}')
    add(rp, "python logging dict human password", "Kathmandu#1987",
        "INFO:auth.client:token request payload={'grant_type': 'password', 'username': 'dana', 'password': '{S}', "
        "'client_id': 'cli'}")
    flask_key = raw(16)
    add(rp, "flask secret_key bytes", repr(flask_key)[2:-1], "app.secret_key = {A}", A=repr(flask_key))

    # ------------------------------------------------------------------ tables and command output
    tb = "table"
    add(tb, "vault kv get table", mixed(20),
        "====== Secret Path ======\nsecret/data/app\n\n======= Metadata =======\nKey                Value\n"
        "---                -----\ncreated_time       2024-11-05T10:22:13.5Z\nversion            4\n\n"
        "====== Data ======\nKey         Value\n---         -----\npassword    {S}\nusername    app")
    add(tb, "heroku config DATABASE_URL", hexs(64),
        "$ heroku config -a acme-api\n=== acme-api Config Vars\nDATABASE_URL: postgres://u8f3k2j1ab:{S}@"
        "ec2-34-231-12-7.compute-1.amazonaws.com:5432/d4j2k1lq\nNODE_ENV:     production")
    add(tb, "env | grep output", mixed(24),
        "$ env | grep -i mail\nMAIL_HOST=smtp.postmarkapp.com\nMAIL_PORT=587\nMAIL_USERNAME=apikey\nMAIL_PASSWORD={S}")
    add(tb, "printenv output", hexs(32),
        "$ printenv | sort | head -5\nALGOLIA_ADMIN_KEY={S}\nALGOLIA_APP_ID=" + rnd(UPPER_DIGITS, 10)
        + "\nHOME=/root\nHOSTNAME=api-7d9f8c6b5-x2k4q\nLANG=C.UTF-8")
    add(tb, "docker inspect Env array", mixed(20),
        '"Config": {\n    "Hostname": "3f2a1b9c8d7e",\n    "Env": [\n        "DB_HOST=postgres",\n'
        '        "DB_PASSWORD={S}",\n        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\n    ],')
    add(tb, "terraform output -raw", mixed(24, ALNUM + "!#$%&*()-_=+[]<>:?"),
        "$ terraform output -raw rds_master_password\n{S}")
    confluent = mixed(64, B64)
    put(tb, "confluent api-key create table",
        "$ confluent api-key create --resource lkc-7y3kq2\nIt may take a couple of minutes for the API key to be ready.\n"
        "Save the API key and secret. The secret is not retrievable later.\n"
        + box([("API Key", rnd(UPPER_DIGITS, 16)), ("API Secret", confluent)]), confluent)
    add(tb, "aws iam create-access-key json", mixed(40, B64),
        '{\n    "AccessKey": {\n        "UserName": "ci-deployer",\n        "AccessKeyId": "AK' + "IA" + rnd(UPPER_DIGITS, 16)
        + '",\n        "Status": "Active",\n        "SecretAccessKey": "{S}",\n'
        '        "CreateDate": "2024-11-05T10:22:13+00:00"\n    }\n}')
    add(tb, "aws sts assume-role credentials", "IQoJb3JpZ2luX2Vj" + mixed(340, B64),
        '{\n    "Credentials": {\n        "AccessKeyId": "AS' + "IA" + rnd(UPPER_DIGITS, 16) + '",\n'
        '        "SessionToken": "{S}",\n        "Expiration": "2024-11-05T11:22:13+00:00"\n    },\n'
        '    "AssumedRoleUser": {\n        "Arn": "arn:aws:sts::123456789012:assumed-role/deploy/ci"\n    }\n}')
    add(tb, "az ad sp create-for-rbac", mixed(3) + "8Q~" + mixed(34, URLSAFE + "~."),
        '{\n  "appId": "' + uid() + '",\n  "displayName": "gh-actions-deploy",\n  "password": "{S}",\n'
        '  "tenant": "' + uid() + '"\n}')
    add(tb, "gcloud print-access-token", "ya29." + "a0A" + mixed(200, URLSAFE), "$ gcloud auth print-access-token\n{S}")
    os_token = "gAAAAAB" + mixed(176, URLSAFE)
    put(tb, "openstack token issue table",
        "$ openstack token issue\n" + box([("Field", "Value"), ("expires", "2024-11-05T18:22:41+0000"), ("id", os_token),
                                          ("project_id", hexs(32)), ("user_id", hexs(32))]), os_token)
    add(tb, "psql select api_keys", mixed(32),
        "app=# SELECT id, name, key, created_at FROM api_keys WHERE revoked_at IS NULL;\n"
        " id |   name    |               key                |       created_at\n"
        "----+-----------+----------------------------------+------------------------\n"
        "  7 | ci-deploy | {S} | 2024-10-02 09:14:55+00\n(1 row)")
    add(tb, "redis HGETALL session", mixed(48, URLSAFE),
        '127.0.0.1:6379> HGETALL session:8f14e45f\n1) "user_id"\n2) "4812"\n3) "refresh_token"\n4) "{S}"\n'
        '5) "expires_at"\n6) "1730822400"')
    add(tb, "systemctl show Environment", mixed(32),
        "$ systemctl show -p Environment worker.service\n"
        "Environment=NODE_ENV=production QUEUE_URL=redis://cache:6379 WORKER_SECRET={S}")
    add(tb, "az storage account keys list table", mixed(86, B64) + "==",
        "$ az storage account keys list -n acmedata --query \"[?keyName=='key1']\" -o table\n"
        "KeyName    Permissions    Value\n---------  -------------  " + "-" * 88 + "\nkey1       FULL           {S}")
    add(tb, "heroku auth:token", uid(),
        "$ heroku auth:token\n ›   Warning: token will expire 11/05/2025\n ›   Use heroku authorizations:create to "
        "generate a long-term token\n{S}")
    add(tb, "vault approle secret-id table", uid(),
        "$ vault write -f auth/approle/role/ci/secret-id\nKey                   Value\n---                   -----\n"
        "secret_id             {S}\nsecret_id_accessor    " + uid() + "\nsecret_id_num_uses    0\nsecret_id_ttl         0s")
    add(tb, "consul acl token create", uid(),
        "$ consul acl token create -description 'ci agent' -policy-name agent-write\nAccessorID:       " + uid()
        + "\nSecretID:         {S}\nDescription:      ci agent\nLocal:            false\n"
        "Create Time:      2024-11-05 10:22:13.5 +0000 UTC")
    add(tb, "pscale password create table", "pscale" + "_pw_" + mixed(43, URLSAFE),
        "$ pscale password create orders main deploy\n  NAME     BRANCH   USERNAME       ACCESS HOST URL          "
        "ROLE    PLAIN TEXT\n -------- -------- -------------- ------------------------ ------- "
        + "-" * 53 + "\n  deploy   main     " + mixed(12, LOWER_DIGITS) + "   aws.connect.psdb.cloud   admin   {S}")
    add(tb, "jenkins initial admin password log", hexs(32),
        "*************************************************************\n\nJenkins initial setup is required. "
        "An admin user has been created and a password generated.\nPlease use the following password to proceed to "
        "installation:\n\n{S}\n\nThis may also be found at: /var/jenkins_home/secrets/initialAdminPassword\n\n"
        "*************************************************************")
    add(tb, "argocd initial-password", mixed(16, URLSAFE),
        "$ argocd admin initial-password -n argocd\n{S}\n\n This password must be only used for first time login. "
        "We strongly recommend you update the password using `argocd account update-password`.")
    add(tb, "elasticsearch first start banner", mixed(20, ALNUM + "*_=-+"),
        "✅ Elasticsearch security features have been automatically configured!\n"
        "✅ Authentication is enabled and cluster connections are encrypted.\n\n"
        "ℹ️  Password for the elastic user (reset with `bin/elasticsearch-reset-password -u elastic`):\n  {S}\n\n"
        "ℹ️  HTTP CA certificate SHA-256 fingerprint:\n  " + hexs(64))
    add(tb, "markdown table api key column", mixed(32),
        "| Environment | Base URL | API key |\n|---|---|---|\n| staging | https://staging.api.acme.dev | {S} |\n"
        "| production | https://api.acme.dev | ask #platform |")
    add(tb, "csv export api_key column", mixed(40),
        "id,name,email,api_key,created_at\n101,Build Bot,ci@acme.dev,{S},2024-09-14T08:22:10Z")
    add(tb, "gcloud secrets versions access raw", mixed(32),
        "$ gcloud secrets versions access latest --secret=webhook-signing-key\n{S}")
    add(tb, "kubectl jsonpath base64 -d raw", mixed(24),
        "$ kubectl get secret grafana -n monitoring -o jsonpath='{.data.admin-password}' | base64 -d; echo\n{S}")
    add(tb, "rails credentials:show", hexs(128),
        "$ bin/rails credentials:show\n# aws:\n#   access_key_id: 123\n#   secret_access_key: 345\n\n"
        "# Used as the base secret for all MessageVerifiers in Rails, including the one protecting cookies.\n"
        "secret_key_base: {S}")

    # ------------------------------------------------------------------ connection strings
    cs = "connection-string"
    add(cs, ".pgpass non-default port", "MyDogRex2019!", "db-replica.internal:5433:analytics:report_user:{S}")
    add(cs, "jdbc oracle thin user/pw@", mixed(14),
        "spring.datasource.url=jdbc:oracle:thin:scott/{S}@//db-ora.example.com:1521/ORCLPDB1")
    add(cs, "libpq keyword string psql", mixed(18),
        'psql "host=db.internal port=5432 dbname=app user=app password={S} sslmode=require"')
    add(cs, "odbc Pwd=", mixed(16),
        'conn = pyodbc.connect("Driver={ODBC Driver 18 for SQL Server};Server=tcp:sql01.corp,1433;Database=erp;'
        'Uid=erp_app;Pwd={S};TrustServerCertificate=yes")')
    add(cs, "jdbc sqlserver semicolon", mixed(16),
        "jdbc:sqlserver://sql01.corp:1433;databaseName=erp;user=erp_app;password={S};encrypt=true")
    add(cs, "azure service bus SharedAccessKey", mixed(43, B64) + "=",
        "Endpoint=sb://acme-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={S}")
    add(cs, "azure iot hub device", mixed(43, B64) + "=",
        "HostName=acme-iot.azure-devices.net;DeviceId=sensor-042;SharedAccessKey={S}")
    add(cs, "azure cosmos AccountKey", mixed(86, B64) + "==",
        "AccountEndpoint=https://acme-cosmos.documents.azure.com:443/;AccountKey={S};")
    add(cs, "azure signalr AccessKey", mixed(43, B64) + "=",
        "Endpoint=https://acme-signalr.service.signalr.net;AccessKey={S};Version=1.0;")
    add(cs, "stackexchange.redis password=", mixed(43, B64) + "=",
        '"ConnectionStrings": {\n'
        '  "Redis": "acme-cache.redis.cache.windows.net:6380,password={S},ssl=True,abortConnect=False"\n}')
    add(cs, "azure storage SharedAccessSignature", mixed(43, B64).replace("+", "%2B").replace("/", "%2F") + "%3D",
        "BlobEndpoint=https://acmedata.blob.core.windows.net/;QueueEndpoint=https://acmedata.queue.core.windows.net/;"
        "SharedAccessSignature=sv=2022-11-02&ss=bq&srt=sco&sp=rwdlacup&se=2025-12-31T23:59:59Z&spr=https&sig={S}")
    add(cs, "kafka sasl jaas config", mixed(64, B64),
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain."
        'PlainLoginModule required username="' + rnd(UPPER_DIGITS, 16) + '" password="{S}";')
    add(cs, "kafkajs sasl object", mixed(24),
        "const kafka = new Kafka({\n  brokers: ['kafka-1.acme.dev:9094'],\n  ssl: true,\n"
        "  sasl: { mechanism: 'scram-sha-512', username: 'orders-svc', password: '{S}' },\n})")
    add(cs, "go mysql dsn without scheme", mixed(16), 'dsn := "app:{S}@tcp(db.internal:3306)/orders?parseTime=true&loc=UTC"')
    add(cs, "db2 PWD=", mixed(14),
        'conn = ibm_db.connect("DATABASE=sample;HOSTNAME=db2.internal;PORT=50000;PROTOCOL=TCPIP;UID=db2inst1;PWD={S};", "", "")')
    add(cs, "pgbouncer databases line", mixed(18),
        "[databases]\norders = host=10.0.3.12 port=5432 dbname=orders user=orders_rw password={S}")
    add(cs, "postgres primary_conninfo", mixed(20),
        "primary_conninfo = 'host=10.0.1.5 port=5432 user=replicator password={S} application_name=replica1'")
    add(cs, "snowflake connector kwargs", mixed(18),
        'ctx = snowflake.connector.connect(user="ETL_SVC", password="{S}", account="xy12345.eu-central-1", '
        'warehouse="ETL_WH")')
    add(cs, "oracledb connect kwargs", mixed(16),
        'conn = oracledb.connect(user="hr", password="{S}", dsn="dbhost.example.com/orclpdb")')
    add(cs, "sqlalchemy mssql+pyodbc", mixed(16),
        'engine = create_engine("mssql+pyodbc://sa:{S}@sql01/erp?driver=ODBC+Driver+18+for+SQL+Server")')
    add(cs, "airflow aws conn uri", mixed(12) + "%2F" + mixed(25),
        "AIRFLOW_CONN_AWS_DEFAULT='aws://AK" + "IA" + rnd(UPPER_DIGITS, 16) + ":{S}@/?region_name=eu-west-1'")

    # ------------------------------------------------------------------ sql
    sq = "sql"
    add(sq, "postgres ALTER USER PASSWORD", mixed(20), "ALTER USER app_rw WITH PASSWORD '{S}';")
    add(sq, "mysql CREATE USER IDENTIFIED BY", mixed(18), "CREATE USER 'reporting'@'%' IDENTIFIED BY '{S}';")
    add(sq, "mysql SET PASSWORD FOR", mixed(18), "SET PASSWORD FOR 'app'@'10.0.%' = '{S}';")
    add(sq, "oracle IDENTIFIED BY unquoted", mixed(14), "CREATE USER etl IDENTIFIED BY {S} DEFAULT TABLESPACE users;")
    add(sq, "mssql CREATE LOGIN", mixed(18), "CREATE LOGIN svc_reports WITH PASSWORD = '{S}', CHECK_POLICY = ON;")
    add(sq, "snowflake CREATE USER PASSWORD=", mixed(18),
        "CREATE USER looker PASSWORD='{S}' DEFAULT_ROLE=REPORTING MUST_CHANGE_PASSWORD=FALSE;")
    add(sq, "redis CONFIG SET requirepass", mixed(32), '127.0.0.1:6379> CONFIG SET requirepass "{S}"\nOK')
    add(sq, "redis AUTH user password", mixed(24), "127.0.0.1:6379> AUTH app {S}\nOK")
    add(sq, "postgres_fdw user mapping", mixed(18),
        "CREATE USER MAPPING FOR app SERVER legacy_db OPTIONS (user 'readonly', password '{S}');")
    add(sq, "clickhouse CREATE USER sha256_password BY", mixed(18),
        "CREATE USER grafana IDENTIFIED WITH sha256_password BY '{S}' HOST ANY;")
    add(sq, "mysql CHANGE REPLICATION SOURCE", mixed(20),
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST='10.0.2.10', SOURCE_USER='repl', SOURCE_PASSWORD='{S}', "
        "SOURCE_AUTO_POSITION=1;")
    add(sq, "insert into api_tokens", mixed(40), "INSERT INTO api_tokens (user_id, token, scopes) VALUES (42, '{S}', 'read');")

    # ------------------------------------------------------------------ generic: prose, diffs, logs
    gn = "generic"
    add(gn, "token in prose keep it safe", mixed(40), "The deploy token is {S}, keep it safe and don't commit it.")
    add(gn, "random in prose paste into dashboard", mixed(40),
        "Paste {S} into the dashboard under Settings → Integrations and hit Save.")
    add(gn, "stop message set the password", "Hunter2-Prod!",
        "Done. I created the `admin` user and set the admin password to `{S}` — change it after the first login.")
    add(gn, "prompt my api key is", mixed(32), "my api key is {S}, why do I get 401 from /v2/orders?")
    add(gn, "prompt here is the new secret", mixed(40, URLSAFE), "ok here's the new client secret: {S}\nplease update the config")
    add(gn, "diff adds literal password", mixed(18),
        "diff --git a/config/settings.yml b/config/settings.yml\nindex 4b1c2d3..8e9f0a1 100644\n"
        "--- a/config/settings.yml\n+++ b/config/settings.yml\n@@ -12,7 +12,7 @@ database:\n   host: db.internal\n"
        "   port: 5432\n   user: app\n-  password: ${DB_PASSWORD}\n+  password: {S}\n   pool: 10")
    add(gn, "json-escaped log password", mixed(18),
        '{"level":"debug","ts":1730802133.12,"msg":"outgoing request","body":"{\\"username\\":\\"svc-sync\\",'
        '\\"password\\":\\"{S}\\"}"}')
    add(gn, "jupyter notebook cell json", "sk-" + mixed(48),
        '{\n "cell_type": "code",\n "execution_count": 3,\n "metadata": {},\n "outputs": [],\n "source": [\n'
        '  "import openai\\n",\n  "openai.api_key = \\"{S}\\"\\n",\n  "resp = openai.ChatCompletion.create(model=\\"gpt-4\\")"\n'
        ' ]\n}')
    add(gn, "code comment temp key", mixed(40), "# temp key for the demo, rotate after: {S}\nclient = Client(region='eu')")
    add(gn, "yaml list allowed_keys", mixed(32), "api:\n  allowed_keys:\n    - {S}\n  rate_limit: 100")
    add(gn, "error echoes invalid token", mixed(40, URLSAFE), 'Error: Invalid API token "{S}" (expired 2024-10-31)')
    add(gn, "github actions add-mask", mixed(32), 'run: |\n  echo "::add-mask::{S}"\n  ./scripts/deploy.sh')
    add(gn, "prose vpn temp password", "Winter2025!vpn",
        "Temp password for the VPN is {S} until IT resets it on Monday.")
    add(gn, "totp setup key grouped", " ".join(mixed(4, BASE32_LOWER) for _ in range(8)),
        "Can't scan the QR code? Enter this setup key in your authenticator app: {S}")
    add(gn, "bitlocker recovery key", "-".join(rnd(DIGITS, 6) for _ in range(8)),
        "BitLocker recovery key for DESKTOP-7Q2L (ID 3F2A1B9C): {S}")
    add(gn, "slack message webhook secret", mixed(32),
        "@dana the new webhook signing secret for billing is {S} — I've already updated staging.")
    return out


SECRETS: list[Secret] = _build()


def _check() -> None:
    names = [s.name for s in SECRETS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    assert not dupes, dupes
    for s in SECRETS:
        assert len(s.secret) >= 8, s.name
        assert s.text.count(s.secret) == 1, (s.name, s.text.count(s.secret))
    assert len(SECRETS) >= 170, len(SECRETS)
    counts: dict[str, int] = {}
    for s in SECRETS:
        counts[s.family] = counts.get(s.family, 0) + 1
    for family, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{family:22} {count:4}")
    print(f"{'total':22} {len(SECRETS):4}")


if __name__ == "__main__":
    _check()
