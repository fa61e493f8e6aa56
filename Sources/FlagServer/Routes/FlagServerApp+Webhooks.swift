import FlagAPI
import FlagCore
import FlagSigning
import Foundation

/// `/v1/admin/webhooks…` (docs/webhooks.md): admins manage hooks; an admin limited to sets manages only hooks
/// limited to some of those sets, and sees no other.
extension FlagServerApp {
    /// How long the secret before a rotation still signs.
    static let webhookSecretOverlap: TimeInterval = 24 * 3600
    /// How many deliveries `GET /v1/admin/webhooks/{name}` shows.
    static let recentDeliveries = 50

    /// `GET /v1/admin/webhooks`.
    func listWebhooks(_ call: Call) throws -> Reply<WebhookList> {
        let caller = try adminCaller(call)
        let hooks = try service.storeCall { try service.store.webhooks.hooks() }
        return Reply(
            WebhookList(
                webhooks: hooks.filter { Self.may(caller, manage: $0.hook) }.map {
                    $0.hook.info(pending: $0.pending.count)
                }
            ))
    }

    /// `POST /v1/admin/webhooks`: `201` with the secret, which is shown this once.
    func createWebhook(_ call: Call, _ request: CreateWebhookRequest) throws -> Reply<WebhookSecretAnswer> {
        let caller = try adminCaller(call)
        let name = request.name
        guard isValidKey(name) else {
            throw ServiceError.badRequest(
                "webhook name \"\(name)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "name")
        }
        let address: WebhookAddress
        do {
            address = try WebhookAddress(request.url)
            _ = try address.resolve(allowPrivate: settings.webhooks.allowPrivate)
        } catch {
            throw ServiceError.badRequest("\"url\": \(error.message)", path: "url")
        }
        let sets = try checkedSets(request.sets, caller: caller)
        let events = try request.events.map { events in
            let known = Set(WebhookEventType.allCases.map(\.rawValue))
            for (index, event) in events.enumerated() where !known.contains(event) {
                throw ServiceError.badRequest(
                    "unknown event \"\(event)\" (one of \(WebhookEventType.allCases.map(\.rawValue).joined(separator: ", ")))",
                    path: "events[\(index)]")
            }
            return Array(Set(events)).sorted()
        }
        let formatText = request.format ?? WebhookFormat.json.rawValue
        guard let format = WebhookFormat(rawValue: formatText) else {
            throw ServiceError.badRequest("unknown format \"\(formatText)\" (json or slack)", path: "format")
        }
        let key = try webhookKey()
        let secret: WebhookSecret
        let sealed: [UInt8]
        do {
            secret = try WebhookSecret.generate()
            sealed = try secret.sealed(with: key, hook: name)
        } catch {
            throw ServiceError.unavailable("could not make the webhook's secret: \(error)")
        }
        let now = clock.now()
        let hook = StoredWebhook(
            name: name, url: request.url, sets: sets, events: events, format: format,
            description: request.description, sealedSecret: sealed, createdBy: call.actor, createdAt: now)
        try service.storeCall {
            do {
                try service.store.webhooks.create(
                    hook,
                    audit: AuditEntry(
                        time: now, actor: call.actor, action: "webhook.create", subject: name, reason: request.reason))
            } catch let error as StoreError where error.isAlreadyExists {
                throw ServiceError.alreadyExists("a webhook named \"\(name)\" already exists", subject: .webhook)
            }
        }
        return Reply(WebhookSecretAnswer(webhook: hook.info(pending: 0), secret: secret.text), status: 201)
    }

    /// `GET /v1/admin/webhooks/{name}`: the hook and its recent deliveries.
    func getWebhook(_ call: Call) throws -> Reply<WebhookAnswer> {
        let hook = try managedHook(call)
        let deliveries = try service.storeCall {
            try service.store.webhooks.deliveries(of: hook.name, limit: Self.recentDeliveries)
        }
        let pending = try service.storeCall { try service.store.webhooks.pending(of: hook.name) }
        return Reply(WebhookAnswer(webhook: hook.info(pending: pending.count), deliveries: deliveries))
    }

    /// `DELETE /v1/admin/webhooks/{name}`: gone, with its deliveries, pending ones included.
    func deleteWebhook(_ call: Call, _ request: ChangeRequest) throws -> Reply<DeletedWebhook> {
        let hook = try managedHook(call)
        let audit = AuditEntry(
            time: clock.now(), actor: call.actor, action: "webhook.delete", subject: hook.name, reason: request.reason)
        guard try service.storeCall({ try service.store.webhooks.delete(hook.name, audit: audit) }) else {
            throw Self.noWebhook(hook.name)
        }
        return Reply(DeletedWebhook(name: hook.name))
    }

    /// `POST /v1/admin/webhooks/{name}/test`: a `webhook.test` event queued for this hook alone, behind its other
    /// pending deliveries.
    func testWebhook(_ call: Call, _ request: ChangeRequest) throws -> Reply<WebhookTestAnswer> {
        let hook = try managedHook(call)
        let id = WebhookEvents.newID()
        let event = WebhookEvent(
            type: WebhookEventType.test.rawValue, timestamp: clock.now(),
            data: WebhookEventData(actor: call.actor, reason: request.reason, webhook: hook.name))
        let audit = AuditEntry(
            time: event.timestamp, actor: call.actor, action: "webhook.test", subject: hook.name, reason: request.reason
        )
        guard
            try service.storeCall({ try service.store.webhooks.enqueue(event, id: id, to: hook.name, audit: audit) })
        else {
            throw Self.noWebhook(hook.name)
        }
        return Reply(WebhookTestAnswer(name: hook.name, id: id))
    }

    /// `POST /v1/admin/webhooks/{name}/rotate-secret`: a new secret, shown this once; the one before signs too for a
    /// day, so that receivers can move over.
    func rotateWebhookSecret(_ call: Call, _ request: ChangeRequest) throws -> Reply<WebhookSecretAnswer> {
        var hook = try managedHook(call)
        let key = try webhookKey()
        let secret: WebhookSecret
        do {
            secret = try WebhookSecret.generate()
            hook.previousSealedSecret = hook.sealedSecret
            hook.sealedSecret = try secret.sealed(with: key, hook: hook.name)
        } catch {
            throw ServiceError.unavailable("could not make the webhook's secret: \(error)")
        }
        let now = clock.now()
        let until = now.addingTimeInterval(Self.webhookSecretOverlap)
        hook.previousUntil = until
        let audit = AuditEntry(
            time: now, actor: call.actor, action: "webhook.rotate-secret", subject: hook.name, reason: request.reason)
        guard
            try service.storeCall({
                try service.store.webhooks.rotate(hook.name, sealed: hook.sealedSecret, until: until, audit: audit)
            })
        else {
            throw Self.noWebhook(hook.name)
        }
        let pending = try service.storeCall { try service.store.webhooks.pending(of: hook.name) }
        return Reply(WebhookSecretAnswer(webhook: hook.info(pending: pending.count), secret: secret.text))
    }

    /// The hook of the path; a 404 when there is none, a 403 when the caller may not manage it.
    private func managedHook(_ call: Call) throws -> StoredWebhook {
        let caller = try adminCaller(call)
        guard let hook = try service.storeCall({ try service.store.webhooks.hook(call.name) }) else {
            throw Self.noWebhook(call.name)
        }
        guard Self.may(caller, manage: hook) else {
            throw ServiceError.forbidden(
                "the token of \"\(caller.name)\" is limited to sets and may not manage webhook \"\(hook.name)\", which"
                    + " covers other sets")
        }
        return hook
    }

    /// Whether `caller` may see and change `hook`: an unlimited admin any hook, an admin limited to sets the hooks
    /// limited to some of its sets.
    static func may(_ caller: AdminCaller, manage hook: StoredWebhook) -> Bool {
        guard let allowed = caller.sets else { return true }
        guard let sets = hook.sets else { return false }
        return sets.allSatisfy(allowed.contains)
    }

    /// The sets of a new hook: each must exist; an admin limited to sets must name some of its own.
    private func checkedSets(_ sets: [String]?, caller: AdminCaller) throws -> [String]? {
        guard let sets else {
            guard caller.sets == nil else {
                throw ServiceError.forbidden(
                    "the token of \"\(caller.name)\" is limited to sets; give \"sets\" with some of them")
            }
            return nil
        }
        guard !sets.isEmpty else {
            throw ServiceError.badRequest("\"sets\" is empty; leave it out to cover every set", path: "sets")
        }
        let existing = Set(service.states().map(\.name))
        for (index, set) in sets.enumerated() {
            guard caller.mayAccess(set) else {
                throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(set)\"")
            }
            guard existing.contains(set) else {
                throw ServiceError.notFound("no flag set \"\(set)\"", path: "sets[\(index)]", subject: .set)
            }
        }
        return Array(Set(sets)).sorted()
    }

    /// The key-encryption key the secrets are sealed with; a 503 saying how to give one when the server has none.
    private func webhookKey() throws -> KeyEncryptionKey {
        guard let key = service.keyEncryptionKey else {
            throw ServiceError.unavailable(
                "webhook secrets are sealed with the key-encryption key, and this server has none; start every server"
                    + " with the same --signing-key-file or FLAGSERVER_SIGNING_KEY (docs/signing.md)")
        }
        return key
    }

    private static func noWebhook(_ name: String) -> ServiceError {
        ServiceError.notFound("no webhook \"\(name)\"", subject: .webhook)
    }
}
