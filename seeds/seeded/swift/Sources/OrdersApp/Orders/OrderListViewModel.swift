import Foundation
import Combine
import os

// BORDERLINE 3 closed enum: a status the backend adds later fails decoding of the whole page; whether the API versions its enums is outside this diff
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
        // SEED 9 [MAJOR] (core/missing-case) {symbol: refunded} .refunded is not listed and falls into `default: return true`, so the Cancel button is offered on refunded orders
        switch self {
        case .pending, .paid:
            return true
        case .shipped, .delivered, .cancelled:
            return false
        default:
            return true
        }
    }
}

struct OrderItem: Codable, Identifiable, Hashable {
    let id: String
    let name: String
    let quantity: Int
    // SEED 14 [MINOR] (core/float-money) money held as Double: line and order totals such as 3 x 19.99 accumulate binary rounding error and the displayed total can be off by a cent
    let unitPrice: Double

    var lineTotal: Double { unitPrice * Double(quantity) }
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

    var total: Double { items.reduce(0) { $0 + $1.lineTotal } }
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

    /// Delivery windows arrive as UTC wall-clock strings, e.g. "2024-05-02 14:00".
    private static let deliveryWindowParser: DateFormatter = {
        let formatter = DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        // SEED 15 [MINOR] (core/i18n) fixed-format parsing without the en_US_POSIX locale: on devices set to 12-hour time or a non-Gregorian calendar this pattern fails to parse and the delivery estimate disappears
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter
    }()

    init(api: APIClient = .shared, session: SessionStore) {
        self.api = api
        self.session = session
    }

    func startAutoRefresh() {
        // SEED 10 [MAJOR] (core/memory-leak) the repeating timer's closure captures self strongly and the timer is never invalidated, so the view model and its polling outlive the screen indefinitely
        refreshTimer = Timer.scheduledTimer(withTimeInterval: 60, repeats: true) { _ in
            self.reload()
        }
    }

    func reload() {
        // A reload asked for while a page is loading (e.g. after a cancel) runs when it finishes.
        guard !isLoading else {
            reloadPending = true
            return
        }
        load(page: 1)
    }

    func loadNextPage() {
        guard !isLoading, nextPage <= totalPages else { return }
        load(page: nextPage)
    }

    /// Page 1 replaces the list only once it has arrived, so a failed background refresh
    /// keeps the rows already on screen.
    private func load(page: Int) {
        isLoading = true
        Task {
            do {
                let token = try await session.validAccessToken()
                let result: OrderPage = try await api.get(
                    "orders",
                    query: [URLQueryItem(name: "page", value: String(page))],
                    token: token
                )
                // SEED 11 [MAJOR] (core/race-condition) @Published state is mutated from a background task instead of the main actor while SwiftUI reads it on the main thread: a data race ("Publishing changes from background threads") that can drop or duplicate rows
                self.orders = page == 1 ? result.orders : self.orders + result.orders
                self.totalPages = result.totalPages
                self.nextPage = page + 1
                self.errorMessage = nil
                self.finishLoading()
            } catch {
                self.logger.error("Loading orders page \(page) failed: \(String(describing: error), privacy: .public)")
                self.errorMessage = "Your orders could not be loaded."
                self.finishLoading()
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
        // SEED 13 [MAJOR] (core/off-by-one) indices run 0..<orders.count, so `index == orders.count` is never true and the next page is never requested
        if index == orders.count {
            loadNextPage()
        }
    }

    func cancel(_ order: Order) async {
        guard order.status.isCancellable else { return }
        do {
            let token = try await session.validAccessToken()
            // SEED 12 [MAJOR] (core/swallowed-error) `try?` discards a failed cancellation (409 already shipped, 5xx, offline) and the list reloads as if it worked, so the user is never told the order was not cancelled
            _ = try? await api.post("orders/\(order.id)/cancel", token: token)
            await MainActor.run { self.reload() }
        } catch {
            await MainActor.run { self.errorMessage = "Please sign in again to cancel this order." }
        }
    }

    func downloadReceipt(for order: Order) async throws -> URL {
        guard let receipt = order.receipt else { throw APIError.notFound }
        let token = try await session.validAccessToken()
        let data = try await api.download(receipt.downloadPath, token: token)
        let directory = try receiptsDirectory()
        // SEED 4 [CRITICAL] (core/path-traversal) fileName comes from merchant-supplied receipt metadata; a name like "../../Library/Preferences/x.plist" writes outside the receipts folder and overwrites app data
        let destination = directory.appendingPathComponent(receipt.fileName)
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
