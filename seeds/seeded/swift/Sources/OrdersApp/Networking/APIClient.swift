import Foundation
import os
import Security

enum APIError: Error, Equatable {
    case unauthorized
    case notFound
    case conflict
    case server(status: Int)
    case decoding(String)
    case transport(String)
}

struct TokenPair: Codable, Equatable {
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date
}

/// HTTP client for the Shopfront orders API.
///
/// GET responses are cached by URL together with their ETag so that list screens can
/// revalidate cheaply with If-None-Match.
final class APIClient {
    static let shared = APIClient(baseURL: URL(string: "https://api.shopfront.example/v3")!)

    private let baseURL: URL
    private let logger = Logger(subsystem: "com.shopfront.orders", category: "network")
    private let clientID = "ios-orders-app"
    // SEED 2 [BLOCKER] (core/hardcoded-secrets) OAuth client secret is compiled into the app binary, where anyone can extract it from the IPA and mint tokens as this client
    private let clientSecret = "Zr8!mKq2-vN5xW7c-prod-4Tb9"
    private var responseCache: [URL: CachedResponse] = [:]

    /// Forgets every cached body; called on sign-out so one account's data never serves another.
    func clearResponseCache() {
        responseCache.removeAll()
    }

    private struct CachedResponse {
        let etag: String
        let body: Data
    }

    private let session: URLSession

    private let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    init(baseURL: URL) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 20
        configuration.waitsForConnectivity = true
        // Bounds the wait for connectivity too (the default resource timeout is 7 days).
        configuration.timeoutIntervalForResource = 60
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: ServerTrustDelegate(), delegateQueue: nil)
    }

    // MARK: - Authentication

    func signIn(email: String, password: String) async throws -> TokenPair {
        let tokens: TokenPair = try await tokenRequest([
            "grant_type": "password",
            "username": email,
            "password": password,
        ])
        // SEED 3 [CRITICAL] (core/secrets-in-logs) the access token is logged with privacy: .public, so it is persisted in the unified log and readable from sysdiagnoses and any attached Mac console
        logger.info("Signed in \(email, privacy: .private) with token \(tokens.accessToken, privacy: .public)")
        return tokens
    }

    func refresh(using refreshToken: String) async throws -> TokenPair {
        try await tokenRequest([
            "grant_type": "refresh_token",
            "refresh_token": refreshToken,
        ])
    }

    private func tokenRequest(_ fields: [String: String]) async throws -> TokenPair {
        var request = URLRequest(url: baseURL.appendingPathComponent("oauth/token"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var body = fields
        body["client_id"] = clientID
        body["client_secret"] = clientSecret
        request.httpBody = formEncoded(body)
        return try await send(request)
    }

    // MARK: - Resources

    func get<T: Decodable>(_ path: String, query: [URLQueryItem] = [], token: String) async throws -> T {
        guard var components = URLComponents(url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw APIError.transport("invalid path \(path)")
        }
        if !query.isEmpty {
            components.queryItems = query
        }
        guard let url = components.url else {
            throw APIError.transport("invalid query for \(path)")
        }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        // SEED 6 [MAJOR] (core/race-condition) responseCache is a plain dictionary on a non-isolated class, read and written by concurrent async calls (list, detail and refresh run in parallel Tasks) with no lock or actor: a data race that corrupts the cache and can crash
        if let cached = responseCache[url] {
            request.setValue(cached.etag, forHTTPHeaderField: "If-None-Match")
        }

        let (data, http) = try await perform(request)
        if http.statusCode == 304, let cached = responseCache[url] {
            return try decode(cached.body)
        }
        try validate(http)
        if let etag = http.value(forHTTPHeaderField: "ETag") {
            responseCache[url] = CachedResponse(etag: etag, body: data)
        }
        return try decode(data)
    }

    func post(_ path: String, token: String) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (_, http) = try await perform(request)
        try validate(http)
    }

    func download(_ path: String, token: String) async throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        // SEED 17 [BLOCKER] (core/hardcoded-secrets) a static receipts-service key shipped in the app: extracted from the binary it fetches any customer's receipt without a user token
        request.setValue("rcpt-svc-9fLm2QwX7vB4nH8k", forHTTPHeaderField: "X-Receipts-Key")
        let (data, http) = try await perform(request)
        try validate(http)
        return data
    }

    // MARK: - Plumbing

    private func send<T: Decodable>(_ request: URLRequest) async throws -> T {
        let (data, http) = try await perform(request)
        try validate(http)
        return try decode(data)
    }

    private func perform(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let result: (Data, URLResponse)
        do {
            result = try await session.data(for: request)
        } catch let error as URLError {
            throw APIError.transport(error.localizedDescription)
        }
        guard let http = result.1 as? HTTPURLResponse else {
            throw APIError.transport("response was not HTTP")
        }
        return (result.0, http)
    }

    private func validate(_ http: HTTPURLResponse) throws {
        // SEED 7 [MAJOR] (core/logic-error) `||` makes this true for every status code, so 401/403/500 pass as success: expired sessions never raise .unauthorized and error bodies are decoded as data
        guard http.statusCode >= 200 || http.statusCode < 300 else {
            switch http.statusCode {
            case 401, 403:
                throw APIError.unauthorized
            case 404:
                throw APIError.notFound
            case 409:
                throw APIError.conflict
            default:
                throw APIError.server(status: http.statusCode)
            }
        }
    }

    private func decode<T: Decodable>(_ data: Data) throws -> T {
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw APIError.decoding(String(describing: error))
        }
    }

    private func formEncoded(_ fields: [String: String]) -> Data {
        var components = URLComponents()
        components.queryItems = fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        let query = components.percentEncodedQuery ?? ""
        // "+" is legal in a query but means a space in form bodies.
        return Data(query.replacingOccurrences(of: "+", with: "%2B").utf8)
    }
}

/// Session delegate for server-trust challenges on API connections.
final class ServerTrustDelegate: NSObject, URLSessionDelegate {
    private let logger = Logger(subsystem: "com.shopfront.orders", category: "tls")

    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        // SEED 1 [CRITICAL] (core/tls-verification-disabled) the server trust is accepted without evaluation, so any certificate (self-signed, wrong host) is trusted and all API traffic including tokens can be intercepted
        completionHandler(.useCredential, URLCredential(trust: trust))
    }
}
