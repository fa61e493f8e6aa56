import FlagPostgres

// The schema's policy:
// - Migrations are additive: a release adds tables, columns (nullable or with a default), indexes and
//   constraints that old rows meet (expand), and removes or tightens what it no longer uses only in a later
//   release (contract), once no server of the release before runs. During a rolling upgrade old and new servers
//   share one database, and the old ones must keep working on the schema the new ones brought.
// - A migration that has shipped is never edited; a change is a new migration.
// - Versions this release does not know, applied by a newer one, are left alone (they are additive).
extension PostgresFlagStore {
    /// One step of the schema: applied once, in a transaction, and recorded in `flagstaff_migration`.
    struct Migration {
        var version: Int
        var name: String
        var script: String
    }

    /// The schema's history, oldest first.
    static let migrations = [
        Migration(version: 1, name: "flag sets, versions, item changes, audit log, tokens", script: schemaV1),
        Migration(version: 2, name: "client instances, evaluation counts, set settings", script: schemaV2),
        Migration(version: 3, name: "signing keys and signed versions", script: schemaV3),
        Migration(version: 4, name: "the key of a client instance, a token revision counter", script: schemaV4),
        Migration(version: 5, name: "change requests, their items and approvals", script: schemaV5),
        Migration(version: 6, name: "webhooks and their outbox of deliveries", script: schemaV6),
    ]

    /// The advisory lock key of migrations ("flagstmg" in ASCII): two servers starting together on an empty
    /// database take turns, and the second finds the work done.
    static let migrationLock: Int64 = 0x666C_6167_7374_6D67

    /// Applies the migrations `db` lacks, under the migration lock, which is released when `db` is closed:
    /// a dedicated connection, so that a failure cannot leave the lock held by a pooled one.
    static func migrate(_ db: PostgresConnection) throws {
        try db.execute("SELECT pg_advisory_lock($1)", [.int(migrationLock)])
        // Checked rather than `CREATE TABLE IF NOT EXISTS`, whose notice libpq would print on every start.
        let recorded = try db.queryFirst("SELECT to_regclass('flagstaff_migration') IS NOT NULL") {
            try $0.bool(0)
        }
        if recorded != true {
            try db.execute(
                """
                CREATE TABLE flagstaff_migration (
                    version int8 PRIMARY KEY,
                    name text NOT NULL,
                    applied_at timestamptz NOT NULL
                )
                """)
        }
        let applied = Set(try db.query("SELECT version FROM flagstaff_migration") { try $0.int(0) })
        for migration in migrations where !applied.contains(migration.version) {
            try db.transaction { db in
                try db.execute(migration.script)
                try db.execute(
                    "INSERT INTO flagstaff_migration (version, name, applied_at) VALUES ($1, $2, now())",
                    [.int(migration.version), .text(migration.name)])
            }
        }
    }

    // Today's model, as SQLite's migrations 1 and 2 left it. Times are `timestamptz` (microseconds, as the app
    // keeps them); bodies and digests `bytea`. Names and keys sort and compare by their bytes (`COLLATE "C"`),
    // as in SQLite and Swift, whatever the database's locale.
    static let schemaV1 = """
        CREATE TABLE flag_set (
            name text COLLATE "C" PRIMARY KEY,
            current_version int8 NOT NULL CHECK (current_version >= 1),
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL
        );

        -- set_name is NULL for actions outside any set (admin tokens).
        CREATE TABLE audit (
            id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            set_name text COLLATE "C" REFERENCES flag_set (name),
            actor text NOT NULL,
            action text NOT NULL,
            reason text,
            subject text,
            time timestamptz NOT NULL,
            version int8
        );
        CREATE INDEX audit_by_set ON audit (set_name, id);
        CREATE INDEX audit_by_subject ON audit (set_name, subject);

        CREATE TABLE set_version (
            set_name text COLLATE "C" NOT NULL REFERENCES flag_set (name),
            version int8 NOT NULL CHECK (version >= 1),
            created_at timestamptz NOT NULL,
            digest bytea NOT NULL,
            audit_id int8 NOT NULL UNIQUE REFERENCES audit (id),
            PRIMARY KEY (set_name, version)
        );

        -- The primary key forbids a version twice; this forbids gaps, whatever the code does. (Writers of one set
        -- are serialised by the row lock on its flag_set row, which the version's transaction updates first.)
        CREATE FUNCTION flagstaff_set_version_without_gaps() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.version <> 1 + coalesce(
                (SELECT max(version) FROM set_version WHERE set_name = NEW.set_name), 0) THEN
                RAISE EXCEPTION 'set_version: the versions of a set must run 1, 2, 3, ... without gaps';
            END IF;
            RETURN NEW;
        END
        $$;
        CREATE TRIGGER set_version_without_gaps BEFORE INSERT ON set_version
            FOR EACH ROW EXECUTE FUNCTION flagstaff_set_version_without_gaps();

        -- One row per item a version changed; body NULL means the version removed the item. Large bodies live
        -- out of line (TOAST), so the key lookups stay narrow.
        CREATE TABLE item_change (
            set_name text COLLATE "C" NOT NULL,
            kind text NOT NULL CHECK (kind IN ('flag', 'cohort')),
            item_key text COLLATE "C" NOT NULL,
            version int8 NOT NULL,
            body bytea,
            PRIMARY KEY (set_name, kind, item_key, version),
            FOREIGN KEY (set_name, version) REFERENCES set_version (set_name, version)
        );
        -- What one version changed.
        CREATE INDEX item_change_by_version ON item_change (set_name, version, kind, item_key);

        -- role: which kind of token (an admin-API token or an SDK key); access: an admin token's role.
        CREATE TABLE token (
            name text COLLATE "C" PRIMARY KEY,
            hash bytea NOT NULL UNIQUE,
            role text NOT NULL CHECK (role IN ('admin', 'sdk')),
            role_set text COLLATE "C" REFERENCES flag_set (name),
            access text CHECK (access IN ('viewer', 'editor', 'admin')),
            session_of text COLLATE "C",
            created_at timestamptz NOT NULL,
            expires_at timestamptz,
            last_used_at timestamptz,
            revoked_at timestamptz,
            CHECK ((role = 'sdk') = (role_set IS NOT NULL)),
            CHECK ((role = 'admin') = (access IS NOT NULL)),
            CHECK (session_of IS NULL OR role = 'admin')
        );
        CREATE INDEX token_by_session ON token (session_of) WHERE session_of IS NOT NULL;

        -- The sets an admin token is limited to (none: every set); they need not exist yet.
        CREATE TABLE token_scope (
            token_name text COLLATE "C" NOT NULL REFERENCES token (name),
            set_name text COLLATE "C" NOT NULL,
            PRIMARY KEY (token_name, set_name)
        );
        """

    // Telemetry, as SQLite's migration 3 (docs/telemetry.md): shared by every replica, so that `clients`, the
    // propagation figures and the compatibility gate on any of them see the instances of all.
    static let schemaV2 = """
        CREATE TABLE client_instance (
            set_name text COLLATE "C" NOT NULL,
            id text COLLATE "C" NOT NULL,
            first_seen timestamptz NOT NULL,
            last_seen timestamptz NOT NULL,
            report bytea,
            applied text NOT NULL DEFAULT '',
            PRIMARY KEY (set_name, id)
        );
        CREATE INDEX client_instance_by_last_seen ON client_instance (set_name, last_seen);

        CREATE TABLE evaluation_count (
            set_name text COLLATE "C" NOT NULL,
            flag text COLLATE "C" NOT NULL,
            variant text COLLATE "C" NOT NULL,
            hour int8 NOT NULL,
            count int8 NOT NULL CHECK (count >= 0),
            last_at timestamptz NOT NULL,
            PRIMARY KEY (set_name, flag, hour, variant)
        );
        CREATE INDEX evaluation_count_by_hour ON evaluation_count (hour);

        CREATE TABLE set_setting (
            set_name text COLLATE "C" NOT NULL REFERENCES flag_set (name),
            name text COLLATE "C" NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (set_name, name)
        );
        """

    // Signing, as SQLite's migration 4 (docs/signing.md): every replica serves a version's stored bytes and
    // signatures, and signs new versions with the set's one active key.
    static let schemaV3 = """
        CREATE TABLE signing_key (
            set_name text COLLATE "C" NOT NULL REFERENCES flag_set (name),
            id text COLLATE "C" NOT NULL,
            public_key bytea NOT NULL,
            sealed_key bytea NOT NULL,
            state text NOT NULL CHECK (state IN ('published', 'active', 'retired')),
            created_at timestamptz NOT NULL,
            PRIMARY KEY (set_name, id)
        );
        CREATE UNIQUE INDEX signing_key_one_active ON signing_key (set_name) WHERE state = 'active';

        CREATE TABLE signed_body (
            set_name text COLLATE "C" NOT NULL,
            version int8 NOT NULL,
            kind text NOT NULL CHECK (kind IN ('document', 'patch')),
            body bytea NOT NULL,
            signature text NOT NULL,
            PRIMARY KEY (set_name, version, kind),
            FOREIGN KEY (set_name, version) REFERENCES set_version (set_name, version)
        );
        """

    // As SQLite's migration 5: the key an instance id was issued to, and a token revision the
    // database moves on every token added, revoked or deleted (row triggers: a statement that changes no row,
    // such as revoking a revoked token, moves nothing).
    static let schemaV4 = """
        ALTER TABLE client_instance ADD COLUMN key_name text COLLATE "C";

        CREATE TABLE token_revision (
            only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
            value int8 NOT NULL
        );
        INSERT INTO token_revision (value) SELECT count(*) + count(revoked_at) FROM token;
        CREATE FUNCTION token_revision_step() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE token_revision SET value = value + 1;
            RETURN NULL;
        END $$;
        CREATE TRIGGER token_revision_on_change AFTER INSERT OR DELETE OR UPDATE OF revoked_at ON token
            FOR EACH ROW EXECUTE FUNCTION token_revision_step();
        """

    // Change requests (docs/reviews.md), as in SQLite's migration 6.
    static let schemaV5 = """
        CREATE TABLE change_request (
            id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            set_name text COLLATE "C" NOT NULL REFERENCES flag_set (name),
            title text NOT NULL,
            author text NOT NULL,
            reason text,
            allow_incompatible int8 NOT NULL CHECK (allow_incompatible IN (0, 1)),
            base_version int8 NOT NULL,
            created_at timestamptz NOT NULL,
            state text NOT NULL
                CHECK (state IN ('open', 'approved', 'scheduled', 'applied', 'rejected', 'withdrawn', 'failed')),
            apply_at timestamptz,
            decided_by text,
            decided_at timestamptz,
            decision_reason text,
            applied_version int8,
            failure text
        );
        CREATE INDEX change_request_by_set ON change_request (set_name, id);
        -- What the scheduler looks for: the scheduled requests that are due.
        CREATE INDEX change_request_due ON change_request (apply_at) WHERE state = 'scheduled';

        CREATE TABLE change_request_item (
            change_id int8 NOT NULL REFERENCES change_request (id),
            kind text NOT NULL CHECK (kind IN ('flag', 'cohort')),
            item_key text COLLATE "C" NOT NULL,
            before bytea,
            after bytea,
            PRIMARY KEY (change_id, kind, item_key)
        );

        CREATE TABLE change_request_approval (
            change_id int8 NOT NULL REFERENCES change_request (id),
            actor text NOT NULL,
            time timestamptz NOT NULL,
            reason text,
            PRIMARY KEY (change_id, actor)
        );
        """

    // Webhooks and their outbox (docs/webhooks.md), as in SQLite's migration 7.
    static let schemaV6 = """
        CREATE TABLE webhook (
            name text COLLATE "C" PRIMARY KEY,
            url text NOT NULL,
            sets text,
            events text,
            format text NOT NULL CHECK (format IN ('json', 'slack')),
            description text,
            sealed_secret bytea NOT NULL,
            previous_sealed_secret bytea,
            previous_until timestamptz,
            created_by text NOT NULL,
            created_at timestamptz NOT NULL,
            disabled_at timestamptz,
            disabled_reason text
        );

        CREATE TABLE webhook_delivery (
            id int8 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            hook text COLLATE "C" NOT NULL REFERENCES webhook (name),
            event_id text NOT NULL,
            event_type text NOT NULL,
            set_name text,
            payload bytea NOT NULL,
            created_at timestamptz NOT NULL,
            state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts int8 NOT NULL DEFAULT 0,
            next_attempt_at timestamptz NOT NULL,
            lease_owner text,
            lease_until timestamptz,
            last_status int8,
            last_error text,
            finished_at timestamptz
        );
        CREATE INDEX webhook_delivery_by_hook ON webhook_delivery (hook, id);
        CREATE INDEX webhook_delivery_pending ON webhook_delivery (hook, id) WHERE state = 'pending';
        CREATE INDEX webhook_delivery_finished ON webhook_delivery (finished_at) WHERE state <> 'pending';

        CREATE TABLE flag_expiry_notice (
            set_name text COLLATE "C" NOT NULL,
            flag_key text COLLATE "C" NOT NULL,
            expires_at timestamptz NOT NULL,
            PRIMARY KEY (set_name, flag_key, expires_at)
        );
        """
}
