import FlagPostgres
import Foundation

/// The PostgreSQL store of a server: waiting for the database, and listening for the other servers' changes.
extension ServerBootstrap {
    /// How long to wait between attempts to reach the database at start: from 100 ms, doubling, to 2 s.
    static let connectBackoff = (first: 0.1, limit: 2.0)

    /// Opens the store on `conninfo`, waiting while the database cannot be reached and saying so once a second;
    /// a refused connection or a bad connection string stops the start with what to fix.
    static func openPostgres(
        _ conninfo: String, log: @escaping @Sendable (String) -> Void
    ) throws -> (store: any FlagStore, description: String) {
        let info: PostgresConnectionInfo
        do {
            info = try PostgresConnectionInfo(conninfo)
        } catch let error as PostgresError where error.isNotBuilt {
            throw ConfigurationError(error.message)
        } catch {
            throw ConfigurationError(
                "the PostgreSQL connection string (--postgres, FLAGSERVER_POSTGRES or "
                    + "\"postgres\") is unusable: \(error)")
        }
        var delay = connectBackoff.first
        var lastSaid = Date.distantPast
        while true {
            do {
                let store = try PostgresFlagStore(info: info)
                return (store, info.redacted)
            } catch let error as StoreError where error.isUnavailable {
                if Date().timeIntervalSince(lastSaid) >= 1 {
                    log("waiting for \(info.redacted): \(error.message)")
                    lastSaid = Date()
                }
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, connectBackoff.limit)
            } catch {
                throw ConfigurationError("\(error)")
            }
        }
    }

    /// Starts listening for the changes other servers make, once the sets and tokens are loaded.
    static func listen(
        _ conninfo: String, service: FlagService, tokens: TokenAuthority, log: @escaping @Sendable (String) -> Void
    ) throws -> ReplicaSync {
        let sync = ReplicaSync(service: service, tokens: tokens, log: log)
        PostgresChangeListener.start(info: try PostgresConnectionInfo(conninfo), sync: sync, log: log)
        return sync
    }
}
