import Foundation
import Security

enum KeychainError: Error {
    case unexpectedStatus(OSStatus)
    case invalidData
}

/// Minimal wrapper over generic-password Keychain items for one service.
struct KeychainStore {
    let service: String

    private func baseQuery(_ account: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    func set(_ value: String, for account: String) throws {
        let query = baseQuery(account)
        SecItemDelete(query as CFDictionary)

        var attributes = query
        attributes[kSecValueData as String] = Data(value.utf8)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else {
            throw KeychainError.unexpectedStatus(status)
        }
    }

    func string(for account: String) throws -> String? {
        var query = baseQuery(account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne

        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        if status == errSecItemNotFound {
            return nil
        }
        guard status == errSecSuccess else {
            throw KeychainError.unexpectedStatus(status)
        }
        guard let data = item as? Data, let value = String(data: data, encoding: .utf8) else {
            throw KeychainError.invalidData
        }
        return value
    }

    func remove(_ account: String) {
        SecItemDelete(baseQuery(account) as CFDictionary)
    }
}

/// Owns the signed-in session: stores tokens, hands out a valid access token and
/// refreshes it shortly before it expires.
@MainActor
final class SessionStore: ObservableObject {
    @Published private(set) var isSignedIn = false

    private enum Keys {
        static let accessToken = "access-token"
        static let refreshToken = "refresh-token"
        static let expiresAt = "session.expires-at"
    }

    /// Refresh this long before the server-side expiry to absorb clock skew.
    private let refreshLeeway: TimeInterval = 60

    private let api: APIClient
    private let keychain: KeychainStore
    private let defaults: UserDefaults
    private var refreshTask: Task<TokenPair, Error>?
    /// Bumped on every sign-out so a refresh that was in flight cannot store tokens afterwards.
    private var sessionGeneration = 0

    init(
        api: APIClient = .shared,
        keychain: KeychainStore = KeychainStore(service: "com.shopfront.orders.session"),
        defaults: UserDefaults = .standard
    ) {
        self.api = api
        self.keychain = keychain
        self.defaults = defaults
        // BORDERLINE 2 try? treats an unreadable Keychain (e.g. before first unlock) as signed out; whether that is acceptable depends on launch paths outside this diff
        isSignedIn = (try? keychain.string(for: Keys.accessToken)) != nil
    }

    func signIn(email: String, password: String) async throws {
        let tokens = try await api.signIn(email: email, password: password)
        try store(tokens)
    }

    func validAccessToken() async throws -> String {
        if let token = try keychain.string(for: Keys.accessToken),
           let expiresAt = defaults.object(forKey: Keys.expiresAt) as? Date,
           expiresAt.timeIntervalSinceNow > refreshLeeway {
            return token
        }
        return try await refreshTokens().accessToken
    }

    /// Runs `operation` with a valid access token. If the API rejects a token that still looked
    /// valid here (device clock behind the server's, server-side revocation), the token is
    /// refreshed once, unless another caller already replaced it, and the call is retried.
    /// A call that outlives its session (sign-out, possibly a new sign-in, while it ran) is
    /// neither retried with the next session's token nor answered with the old session's result.
    func withAccessToken<T>(_ operation: (String) async throws -> T) async throws -> T {
        let generation = sessionGeneration
        let token = try await validAccessToken()
        guard sessionGeneration == generation else { throw CancellationError() }
        do {
            let result = try await operation(token)
            guard sessionGeneration == generation else { throw CancellationError() }
            return result
        } catch APIError.unauthorized {
            guard sessionGeneration == generation else { throw CancellationError() }
            let replacement = try await replacementAccessToken(for: token)
            guard sessionGeneration == generation else { throw CancellationError() }
            let result = try await operation(replacement)
            guard sessionGeneration == generation else { throw CancellationError() }
            return result
        }
    }

    private func replacementAccessToken(for rejected: String) async throws -> String {
        if let current = try keychain.string(for: Keys.accessToken), current != rejected {
            return current
        }
        return try await refreshTokens().accessToken
    }

    func signOut() {
        sessionGeneration += 1
        api.clearResponseCache()
        refreshTask?.cancel()
        refreshTask = nil
        keychain.remove(Keys.accessToken)
        keychain.remove(Keys.refreshToken)
        defaults.removeObject(forKey: Keys.expiresAt)
        isSignedIn = false
    }

    /// One refresh at a time: concurrent callers await the same task, because the server
    /// rotates refresh tokens and a second use of the old one revokes the session.
    private func refreshTokens() async throws -> TokenPair {
        if let refreshTask {
            // A caller joining the shared refresh checks for a sign-out too, so it never gets
            // (and sends requests with) tokens of a session that ended while it waited.
            let generation = sessionGeneration
            let tokens = try await refreshTask.value
            guard sessionGeneration == generation else { throw CancellationError() }
            return tokens
        }
        guard let refreshToken = try keychain.string(for: Keys.refreshToken) else {
            signOut()
            throw APIError.unauthorized
        }
        let generation = sessionGeneration
        let task = Task { try await api.refresh(using: refreshToken) }
        refreshTask = task
        defer { if sessionGeneration == generation { refreshTask = nil } }
        do {
            let tokens = try await task.value
            // Signed out while the refresh was in flight: drop the new tokens and leave the
            // current state (signed out, or a newer sign-in) alone.
            guard sessionGeneration == generation else { throw CancellationError() }
            try store(tokens)
            return tokens
        } catch APIError.unauthorized {
            // Only a rejection of this session's refresh token ends it; a stale refresh that
            // fails after a sign-out and a new sign-in must not sign the new session out.
            if sessionGeneration == generation { signOut() }
            throw APIError.unauthorized
        }
    }

    // BORDERLINE 4 three separate delete-then-add Keychain writes: if one SecItemAdd fails after its delete, the rotated refresh token is lost and the next refresh signs out; whether the Keychain can fail here (e.g. writes before first unlock) is outside this diff
    private func store(_ tokens: TokenPair) throws {
        try keychain.set(tokens.accessToken, for: Keys.accessToken)
        try keychain.set(tokens.refreshToken, for: Keys.refreshToken)
        defaults.set(tokens.expiresAt, forKey: Keys.expiresAt)
        isSignedIn = true
    }
}
