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
/// revalidate cheaply with If-None-Match. The cache is guarded by a lock because calls
/// arrive from concurrent tasks.
final class APIClient {
    static let shared = APIClient(baseURL: URL(string: "https://api.shopfront.example/v3")!)

    private let baseURL: URL
    private let logger = Logger(subsystem: "com.shopfront.orders", category: "network")
    /// Public OAuth client: a mobile app cannot keep a client secret, so none is sent.
    private let clientID = "ios-orders-app"
    private var responseCache: [URL: CachedResponse] = [:]
    /// Bumped by every clear, so a GET that was in flight when the cache was cleared cannot refill it.
    private var cacheGeneration = 0
    private let cacheLock = NSLock()

    /// Forgets every cached body; called on sign-out so one account's data never serves another.
    func clearResponseCache() {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        responseCache.removeAll()
        cacheGeneration += 1
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
        logger.info("Signed in \(email, privacy: .private); token expires \(tokens.expiresAt, privacy: .public)")
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
        request.httpBody = formEncoded(body)
        do {
            return try await send(request)
        } catch APIError.server(status: 400) {
            // RFC 6749 5.2: invalid_grant (bad password, revoked or rotated refresh token) is a 400.
            throw APIError.unauthorized
        }
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
        // The entry and the generation are read together; a 304 answers exactly the ETag that was sent.
        let (cached, generation) = cachedResponse(for: url)
        if let cached = cached {
            request.setValue(cached.etag, forHTTPHeaderField: "If-None-Match")
        }

        let (data, http) = try await perform(request)
        if http.statusCode == 304, let cached = cached {
            return try decode(cached.body)
        }
        try validate(http)
        if let etag = http.value(forHTTPHeaderField: "ETag") {
            storeResponse(CachedResponse(etag: etag, body: data), for: url, generation: generation)
        }
        return try decode(data)
    }

    private func cachedResponse(for url: URL) -> (CachedResponse?, Int) {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        return (responseCache[url], cacheGeneration)
    }

    /// Stores the body only if the cache has not been cleared (sign-out) since the request was sent.
    private func storeResponse(_ response: CachedResponse, for url: URL, generation: Int) {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        guard generation == cacheGeneration else { return }
        responseCache[url] = response
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
        guard (200..<300).contains(http.statusCode) else {
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
        var trustError: CFError?
        guard SecTrustEvaluateWithError(trust, &trustError) else {
            let host = challenge.protectionSpace.host
            logger.error("Rejected server certificate for \(host, privacy: .public)")
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        completionHandler(.useCredential, URLCredential(trust: trust))
    }
}
