import FlagSQLite

extension SQLiteFlagStore {
    /// The store's schema history. Never edit a migration that has shipped; add one.
    static let migrator = SQLiteMigrator([
        SQLiteMigration(version: 1, name: "flag sets, versions, item changes, audit log, tokens", script: schemaV1),
        SQLiteMigration(
            version: 2, name: "roles, set limits, expiry, last use and sessions of tokens", script: schemaV2),
        SQLiteMigration(version: 3, name: "client instances, evaluation counts, set settings", script: schemaV3),
        SQLiteMigration(version: 4, name: "signing keys and signed versions", script: schemaV4),
        SQLiteMigration(version: 5, name: "the key of a client instance, a token revision counter", script: schemaV5),
        SQLiteMigration(version: 6, name: "change requests, their items and approvals", script: schemaV6),
        SQLiteMigration(version: 7, name: "webhooks and their outbox of deliveries", script: schemaV7),
    ])

    // Times are INTEGER microseconds since 1970-01-01 UTC, the precision PostgreSQL's timestamp keeps too.
    static let schemaV1 = """
        CREATE TABLE flag_set (
            name TEXT PRIMARY KEY,
            current_version INTEGER NOT NULL CHECK (current_version >= 1),
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;

        -- set_name is NULL for actions outside any set (admin tokens).
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            set_name TEXT REFERENCES flag_set (name),
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            reason TEXT,
            subject TEXT,
            time INTEGER NOT NULL,
            version INTEGER
        );
        CREATE INDEX audit_by_set ON audit (set_name, id);
        CREATE INDEX audit_by_subject ON audit (set_name, subject);

        CREATE TABLE set_version (
            set_name TEXT NOT NULL REFERENCES flag_set (name),
            version INTEGER NOT NULL CHECK (version >= 1),
            created_at INTEGER NOT NULL,
            digest BLOB NOT NULL,
            audit_id INTEGER NOT NULL UNIQUE REFERENCES audit (id),
            PRIMARY KEY (set_name, version)
        ) WITHOUT ROWID;

        -- The primary key forbids a version twice; this forbids gaps, whatever the code above does.
        CREATE TRIGGER set_version_without_gaps BEFORE INSERT ON set_version
        WHEN NEW.version <> 1 + coalesce((SELECT max(version) FROM set_version WHERE set_name = NEW.set_name), 0)
        BEGIN
            SELECT RAISE(ABORT, 'set_version: the versions of a set must run 1, 2, 3, ... without gaps');
        END;

        -- One row per item a version changed; body NULL means the version removed the item. A rowid table with a
        -- separate key index, because bodies are large: lookups walk the narrow index, not the bodies.
        CREATE TABLE item_change (
            id INTEGER PRIMARY KEY,
            set_name TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('flag', 'cohort')),
            item_key TEXT NOT NULL,
            version INTEGER NOT NULL,
            body BLOB,
            UNIQUE (set_name, kind, item_key, version),
            FOREIGN KEY (set_name, version) REFERENCES set_version (set_name, version)
        );
        -- What one version changed, answered from the index alone.
        CREATE INDEX item_change_by_version ON item_change (set_name, version, kind, item_key);

        CREATE TABLE token (
            name TEXT PRIMARY KEY,
            hash BLOB NOT NULL UNIQUE,
            role TEXT NOT NULL CHECK (role IN ('admin', 'sdk')),
            role_set TEXT REFERENCES flag_set (name),
            created_at INTEGER NOT NULL,
            revoked_at INTEGER,
            CHECK ((role = 'sdk') = (role_set IS NOT NULL))
        ) WITHOUT ROWID;
        """

    // The token table gains the role of an admin-API token (`access`: `role` keeps its meaning, which kind of token),
    // its expiry, its last use and, for a dashboard session, the token it was made from. SQLite cannot add a table
    // constraint to a table, so the table is made again and its rows copied; every admin token there was is an
    // `admin`. The sets a token is limited to are rows of `token_scope` (none: every set); they need not exist yet.
    private static let schemaV2 = """
        CREATE TABLE token_v2 (
            name TEXT PRIMARY KEY,
            hash BLOB NOT NULL UNIQUE,
            role TEXT NOT NULL CHECK (role IN ('admin', 'sdk')),
            role_set TEXT REFERENCES flag_set (name),
            access TEXT CHECK (access IN ('viewer', 'editor', 'admin')),
            session_of TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            last_used_at INTEGER,
            revoked_at INTEGER,
            CHECK ((role = 'sdk') = (role_set IS NOT NULL)),
            CHECK ((role = 'admin') = (access IS NOT NULL)),
            CHECK (session_of IS NULL OR role = 'admin')
        ) WITHOUT ROWID;
        INSERT INTO token_v2 (name, hash, role, role_set, access, created_at, revoked_at)
            SELECT name, hash, role, role_set, CASE role WHEN 'admin' THEN 'admin' END, created_at, revoked_at
            FROM token;
        DROP TABLE token;
        ALTER TABLE token_v2 RENAME TO token;
        CREATE INDEX token_by_session ON token (session_of) WHERE session_of IS NOT NULL;

        CREATE TABLE token_scope (
            token_name TEXT NOT NULL REFERENCES token (name),
            set_name TEXT NOT NULL,
            PRIMARY KEY (token_name, set_name)
        ) WITHOUT ROWID;
        """

    // Telemetry (docs/telemetry.md). Instances and counts are not tied to `flag_set` by a foreign key: they are
    // written by a flush of their own, after the fact, and a set deleted meanwhile must not fail the flush.
    // `applied` is `version=seconds` pairs (`StoredInstance.appliedText`); `report` the latest report without counts.
    private static let schemaV3 = """
        CREATE TABLE client_instance (
            set_name TEXT NOT NULL,
            id TEXT NOT NULL,
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            report BLOB,
            applied TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (set_name, id)
        ) WITHOUT ROWID;
        CREATE INDEX client_instance_by_last_seen ON client_instance (set_name, last_seen);

        CREATE TABLE evaluation_count (
            set_name TEXT NOT NULL,
            flag TEXT NOT NULL,
            variant TEXT NOT NULL,
            hour INTEGER NOT NULL,
            count INTEGER NOT NULL CHECK (count >= 0),
            last_at INTEGER NOT NULL,
            PRIMARY KEY (set_name, flag, hour, variant)
        ) WITHOUT ROWID;
        CREATE INDEX evaluation_count_by_hour ON evaluation_count (hour);

        CREATE TABLE set_setting (
            set_name TEXT NOT NULL REFERENCES flag_set (name),
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (set_name, name)
        ) WITHOUT ROWID;
        """

    // Signing (docs/signing.md). A set's keys, the private half sealed with the key-encryption key that lives outside
    // the database; and the exact bytes signed versions are served as, with their signatures.
    private static let schemaV4 = """
        CREATE TABLE signing_key (
            set_name TEXT NOT NULL REFERENCES flag_set (name),
            id TEXT NOT NULL,
            public_key BLOB NOT NULL,
            sealed_key BLOB NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('published', 'active', 'retired')),
            created_at INTEGER NOT NULL,
            PRIMARY KEY (set_name, id)
        ) WITHOUT ROWID;
        CREATE UNIQUE INDEX signing_key_one_active ON signing_key (set_name) WHERE state = 'active';

        -- A version's whole document and its patch from the version before, as served, with their signatures. The
        -- patch is written with the version; the document by the first server that needs it, and kept.
        CREATE TABLE signed_body (
            set_name TEXT NOT NULL,
            version INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('document', 'patch')),
            body BLOB NOT NULL,
            signature TEXT NOT NULL,
            PRIMARY KEY (set_name, version, kind),
            FOREIGN KEY (set_name, version) REFERENCES set_version (set_name, version)
        );
        """

    // The SDK key (or admin token) an instance id was issued to, so that a report with another is refused
    // on every server sharing the store (NULL for ids issued before). And the revision of the tokens: ended dashboard
    // sessions are deleted after a week, so counting rows no longer only grows; the database itself moves a counter
    // on every token added, revoked or deleted, whichever release of the server did it.
    private static let schemaV5 = """
        ALTER TABLE client_instance ADD COLUMN key_name TEXT;

        CREATE TABLE token_revision (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            value INTEGER NOT NULL
        );
        INSERT INTO token_revision (id, value) SELECT 1, count(*) + count(revoked_at) FROM token;
        CREATE TRIGGER token_revision_on_insert AFTER INSERT ON token
        BEGIN UPDATE token_revision SET value = value + 1; END;
        CREATE TRIGGER token_revision_on_revoke AFTER UPDATE OF revoked_at ON token
        BEGIN UPDATE token_revision SET value = value + 1; END;
        CREATE TRIGGER token_revision_on_delete AFTER DELETE ON token
        BEGIN UPDATE token_revision SET value = value + 1; END;
        """

    // Change requests (docs/reviews.md): a write held back, as the items it changes, each with its bytes at the base
    // version (`before`, NULL: absent) and the bytes it writes (`after`, NULL: removed); `apply_at` when it is
    // scheduled.
    private static let schemaV6 = """
        CREATE TABLE change_request (
            id INTEGER PRIMARY KEY,
            set_name TEXT NOT NULL REFERENCES flag_set (name),
            title TEXT NOT NULL,
            author TEXT NOT NULL,
            reason TEXT,
            allow_incompatible INTEGER NOT NULL CHECK (allow_incompatible IN (0, 1)),
            base_version INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            state TEXT NOT NULL
                CHECK (state IN ('open', 'approved', 'scheduled', 'applied', 'rejected', 'withdrawn', 'failed')),
            apply_at INTEGER,
            decided_by TEXT,
            decided_at INTEGER,
            decision_reason TEXT,
            applied_version INTEGER,
            failure TEXT
        );
        CREATE INDEX change_request_by_set ON change_request (set_name, id);
        -- What the scheduler looks for: the scheduled requests that are due.
        CREATE INDEX change_request_due ON change_request (apply_at) WHERE state = 'scheduled';

        CREATE TABLE change_request_item (
            change_id INTEGER NOT NULL REFERENCES change_request (id),
            kind TEXT NOT NULL CHECK (kind IN ('flag', 'cohort')),
            item_key TEXT NOT NULL,
            before BLOB,
            after BLOB,
            PRIMARY KEY (change_id, kind, item_key)
        ) WITHOUT ROWID;

        CREATE TABLE change_request_approval (
            change_id INTEGER NOT NULL REFERENCES change_request (id),
            actor TEXT NOT NULL,
            time INTEGER NOT NULL,
            reason TEXT,
            PRIMARY KEY (change_id, actor)
        ) WITHOUT ROWID;
        """

    // Webhooks (docs/webhooks.md): `sets` and `events` are lists, one name a line (NULL: every one), and the secrets
    // are sealed with the key-encryption key. The outbox holds one row per event and hook, written in the
    // transaction of the change it tells of; the sender leases the oldest pending row of each hook. A flag's expiry is
    // told of once, as the first row of `flag_expiry_notice` for it.
    private static let schemaV7 = """
        CREATE TABLE webhook (
            name TEXT PRIMARY KEY,
            url TEXT NOT NULL,
            sets TEXT,
            events TEXT,
            format TEXT NOT NULL CHECK (format IN ('json', 'slack')),
            description TEXT,
            sealed_secret BLOB NOT NULL,
            previous_sealed_secret BLOB,
            previous_until INTEGER,
            created_by TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            disabled_at INTEGER,
            disabled_reason TEXT
        ) WITHOUT ROWID;

        CREATE TABLE webhook_delivery (
            id INTEGER PRIMARY KEY,
            hook TEXT NOT NULL REFERENCES webhook (name),
            event_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            set_name TEXT,
            payload BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until INTEGER,
            last_status INTEGER,
            last_error TEXT,
            finished_at INTEGER
        );
        CREATE INDEX webhook_delivery_by_hook ON webhook_delivery (hook, id);
        CREATE INDEX webhook_delivery_pending ON webhook_delivery (hook, id) WHERE state = 'pending';
        CREATE INDEX webhook_delivery_finished ON webhook_delivery (finished_at) WHERE state <> 'pending';

        -- Each flag expiry told of (flag.expired), so that of several servers only the first sends it.
        CREATE TABLE flag_expiry_notice (
            set_name TEXT NOT NULL,
            flag_key TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (set_name, flag_key, expires_at)
        ) WITHOUT ROWID;
        """
}
