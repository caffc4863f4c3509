import Foundation
import Combine
import os

// BORDERLINE 2 closed enum: a status the backend adds later fails decoding of the whole page; whether the API versions its enums is outside this diff
enum OrderStatus: String, Codable, CaseIterable {
    case pending
    case paid
    case shipped
    case delivered
    case cancelled
    case refunded
}

extension OrderStatus {
    /// Whether the customer may still cancel an order in this state.
    var isCancellable: Bool {
        switch self {
        case .pending, .paid:
            return true
        case .shipped, .delivered, .cancelled, .refunded:
            return false
        }
    }
}

struct OrderItem: Codable, Identifiable, Hashable {
    let id: String
    let name: String
    let quantity: Int
    let unitPrice: Decimal

    var lineTotal: Decimal { unitPrice * Decimal(quantity) }
}

struct ReceiptInfo: Codable, Hashable {
    let fileName: String
    let downloadPath: String
}

struct Order: Codable, Identifiable, Hashable {
    let id: String
    let number: String
    let status: OrderStatus
    let placedAt: Date
    let estimatedDelivery: String?
    let currencyCode: String
    let items: [OrderItem]
    let receipt: ReceiptInfo?

    var total: Decimal { items.reduce(0) { $0 + $1.lineTotal } }
}

struct OrderPage: Codable {
    let orders: [Order]
    let page: Int
    let totalPages: Int
}

final class OrderListViewModel: ObservableObject {
    @Published private(set) var orders: [Order] = []
    @Published private(set) var isLoading = false
    @Published private(set) var errorMessage: String?

    private let api: APIClient
    private let session: SessionStore
    private let logger = Logger(subsystem: "com.shopfront.orders", category: "orders")
    private var nextPage = 1
    private var totalPages = 1
    private var refreshTimer: Timer?
    private var reloadPending = false
    /// Most pages one reload fetches again, so a long scroll back cannot turn every refresh into a burst of requests.
    private static let maxReloadPages = 10

    /// Delivery windows arrive as UTC wall-clock strings, e.g. "2024-05-02 14:00".
    private static let deliveryWindowParser: DateFormatter = {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter
    }()

    init(api: APIClient = .shared, session: SessionStore) {
        self.api = api
        self.session = session
    }

    deinit {
        refreshTimer?.invalidate()
    }

    func startAutoRefresh() {
        refreshTimer?.invalidate()
        refreshTimer = Timer.scheduledTimer(withTimeInterval: 60, repeats: true) { [weak self] _ in
            self?.reload()
        }
    }

    func stopAutoRefresh() {
        refreshTimer?.invalidate()
        refreshTimer = nil
    }

    func reload() {
        // A reload asked for while a page is loading (e.g. after a cancel) runs when it finishes.
        guard !isLoading else {
            reloadPending = true
            return
        }
        // Fetch again every page already on screen (up to maxReloadPages), so a refresh does not
        // shrink a list the user has scrolled through back to its first page.
        let loadedPages = min(max(nextPage - 1, 1), Self.maxReloadPages)
        load(pages: 1...loadedPages)
    }

    func loadNextPage() {
        guard !isLoading, nextPage <= totalPages else { return }
        load(pages: nextPage...nextPage)
    }

    /// A reload (pages from 1) replaces the list only once all its pages have arrived, so a failed
    /// background refresh keeps the rows already on screen.
    private func load(pages: ClosedRange<Int>) {
        isLoading = true
        Task {
            do {
                var fetched: [Order] = []
                var lastPage = pages.lowerBound - 1
                var total = 1
                for page in pages {
                    let result: OrderPage = try await session.withAccessToken { token in
                        try await self.api.get(
                            "orders",
                            query: [URLQueryItem(name: "page", value: String(page))],
                            token: token
                        )
                    }
                    fetched += result.orders
                    lastPage = page
                    total = result.totalPages
                    if page >= result.totalPages { break }
                }
                await MainActor.run {
                    let combined = pages.lowerBound == 1 ? fetched : self.orders + fetched
                    // Rows shift between pages while the list changes; keep each order once.
                    var seen = Set<String>()
                    self.orders = combined.filter { seen.insert($0.id).inserted }
                    self.totalPages = total
                    self.nextPage = lastPage + 1
                    self.errorMessage = nil
                    self.finishLoading()
                }
            } catch {
                self.logger.error("Loading orders pages \(pages.lowerBound)-\(pages.upperBound) failed: \(String(describing: error), privacy: .public)")
                await MainActor.run {
                    self.errorMessage = "Your orders could not be loaded."
                    self.finishLoading()
                }
            }
        }
    }

    private func finishLoading() {
        isLoading = false
        if reloadPending {
            reloadPending = false
            reload()
        }
    }

    /// Called by the list as each row appears; fetches the next page at the end of the list.
    func rowAppeared(_ order: Order) {
        guard let index = orders.firstIndex(where: { $0.id == order.id }) else { return }
        if index == orders.count - 1 {
            loadNextPage()
        }
    }

    func cancel(_ order: Order) async {
        guard order.status.isCancellable else { return }
        do {
            try await session.withAccessToken { token in
                try await self.api.post("orders/\(order.id)/cancel", token: token)
            }
            await MainActor.run { self.reload() }
        } catch APIError.unauthorized {
            await MainActor.run { self.errorMessage = "Please sign in again to cancel this order." }
        } catch APIError.conflict {
            await MainActor.run { self.errorMessage = "This order can no longer be cancelled." }
        } catch {
            await MainActor.run { self.errorMessage = "The order could not be cancelled. Please try again." }
        }
    }

    func downloadReceipt(for order: Order) async throws -> URL {
        guard let receipt = order.receipt else { throw APIError.notFound }
        let data = try await session.withAccessToken { token in
            try await self.api.download(receipt.downloadPath, token: token)
        }
        let directory = try receiptsDirectory()
        let fileName = URL(fileURLWithPath: receipt.fileName).lastPathComponent
        let destination = directory.appendingPathComponent(fileName).standardizedFileURL
        guard destination.deletingLastPathComponent().path == directory.standardizedFileURL.path else {
            throw APIError.decoding("unsafe receipt file name")
        }
        try data.write(to: destination, options: [.atomic, .completeFileProtection])
        return destination
    }

    func estimatedDeliveryText(for order: Order) -> String? {
        guard let raw = order.estimatedDelivery,
              let date = Self.deliveryWindowParser.date(from: raw) else { return nil }
        return date.formatted(date: .abbreviated, time: .shortened)
    }

    func formattedTotal(for order: Order) -> String {
        order.total.formatted(.currency(code: order.currencyCode))
    }

    private func receiptsDirectory() throws -> URL {
        let base = try FileManager.default.url(
            for: .applicationSupportDirectory,
            in: .userDomainMask,
            appropriateFor: nil,
            create: true
        )
        let directory = base.appendingPathComponent("Receipts", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
