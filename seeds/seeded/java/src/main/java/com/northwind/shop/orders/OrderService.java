package com.northwind.shop.orders;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.server.ResponseStatusException;

import com.northwind.shop.orders.PaymentGatewayClient.ChargeResult;
import com.northwind.shop.orders.PaymentGatewayClient.GatewayException;

@Service
public class OrderService {

    private static final Logger log = LoggerFactory.getLogger(OrderService.class);

    private final OrderRepository orders;
    private final PaymentGatewayClient gateway;
    private final TransactionTemplate tx;
    /** The currency product prices are stored in; every order is charged in it. */
    private final String shopCurrency;

    public OrderService(OrderRepository orders, PaymentGatewayClient gateway, TransactionTemplate tx,
            @Value("${shop.currency}") String shopCurrency) {
        this.orders = orders;
        this.gateway = gateway;
        this.tx = tx;
        this.shopCurrency = shopCurrency;
    }

    public record CheckoutResult(Order order, String actionUrl) { }

    public Order get(long orderId, long customerId) {
        return orders.findById(orderId)
                .filter(order -> order.getCustomerId() == customerId)
                .orElseThrow(() -> new OrderNotFoundException(orderId));
    }

    public List<Order> listForCustomer(long customerId, int page, int size) {
        return orders.findByCustomer(customerId, page, size);
    }

    /**
     * Reserves stock and stores the order, then charges the customer. The gateway call is kept
     * outside the database transaction so a slow gateway does not hold row locks.
     */
    public CheckoutResult checkout(long customerId, CheckoutRequest request) {
        if (request.currency() != null && !shopCurrency.equalsIgnoreCase(request.currency())) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, "orders are charged in " + shopCurrency);
        }
        // SEED 6 [CRITICAL] (core/missing-transaction) createOrder is called on this, not through the Spring proxy, so its @Transactional is ignored: a failure after the stock updates leaves stock decremented with no order or a half-written order
        Order order = createOrder(customerId, request);

        // BORDERLINE 1 a GatewayException here (e.g. a read timeout) leaves the order pending with stock reserved; whether a reconciliation job settles such orders is outside this diff
        ChargeResult result = gateway.charge(
                order.getId(), order.getTotal(), order.getCurrency(), request.paymentMethodToken());
        String actionUrl = null;
        // SEED 5 [MAJOR] (core/missing-case) {symbol: REQUIRES_ACTION} a charge that needs 3-D Secure matches no case, so checkout reports success without the challenge URL and the order stays unpaid forever
        switch (result.status()) {
            case CAPTURED -> order.markPaid(result.transactionId(), Instant.now());
            case DECLINED -> {
                tx.executeWithoutResult(status -> releaseOrder(order));
                throw new PaymentDeclinedException(order.getId(), result.declineCode());
            }
            case FAILED -> {
                tx.executeWithoutResult(status -> releaseOrder(order));
                throw new PaymentUnavailableException(order.getId());
            }
        }
        orders.update(order);
        return new CheckoutResult(order, actionUrl);
    }

    @Transactional
    public Order createOrder(long customerId, CheckoutRequest request) {
        List<OrderLine> lines = new ArrayList<>();
        BigDecimal total = BigDecimal.ZERO;
        for (CheckoutRequest.Item item : request.items()) {
            // SEED 7 [MAJOR] (core/n-plus-one) one product query per cart line; a 50-line cart makes 50 round trips inside the checkout path instead of one IN query
            Product product = orders.findProduct(item.productId())
                    .orElseThrow(() -> new UnknownProductException(item.productId()));
            if (product.stock() < item.quantity()) {
                throw new OutOfStockException(product.id());
            }
            // SEED 8 [CRITICAL] (core/race-condition) stock is read, checked and written back as an absolute value, so two concurrent checkouts both pass the check and the second overwrites the first: the shop oversells
            orders.updateStock(product.id(), product.stock() - item.quantity());
            lines.add(new OrderLine(product.id(), item.quantity(), product.price()));
            total = total.add(product.price().multiply(BigDecimal.valueOf(item.quantity())));
        }
        Order order = Order.pending(customerId, shopCurrency, request.shippingAddress(), total);
        long id = orders.insert(order);
        orders.insertLines(id, lines);
        return orders.findById(id).orElseThrow();
    }

    private void releaseOrder(Order order) {
        for (OrderLine line : orders.findLines(order.getId())) {
            orders.restock(line.productId(), line.quantity());
        }
        order.setStatus(OrderStatus.PAYMENT_FAILED);
        orders.update(order);
    }

    @Transactional
    public Order updateDetails(long orderId, long customerId, Order changes) {
        Order order = get(orderId, customerId);
        if (order.getStatus().isShippedOrLater()) {
            throw new InvalidOrderStateException(orderId, order.getStatus());
        }
        // SEED 11 [BLOCKER] (core/mass-assignment) every property of the client-supplied Order is copied onto the stored one, so a customer can PATCH status=PAID or total=0.01 on their own order
        BeanUtils.copyProperties(changes, order, "id", "customerId", "createdAt");
        orders.update(order);
        return order;
    }

    public Order refund(long orderId, String reason) {
        Order order = orders.findById(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        if (order.getStatus() != OrderStatus.PAID) {
            throw new InvalidOrderStateException(orderId, order.getStatus());
        }
        // SEED 16 [INFO] (core/magic-number) 90 is the refund window in days; as a bare literal it is easy to miss and to get out of sync with the published refund policy
        if (order.getPaidAt().isBefore(Instant.now().minus(Duration.ofDays(90)))) {
            throw new RefundWindowClosedException(orderId);
        }
        try {
            gateway.refund(order.getPaymentTransactionId(), order.getTotal());
        } catch (GatewayException e) {
            // SEED 9 [MAJOR] (core/swallowed-error) a failed refund call is logged at debug and ignored, and the order is then marked REFUNDED although the customer's money was never returned
            log.debug("refund call for order {} failed", orderId, e);
        }
        order.setStatus(OrderStatus.REFUNDED);
        order.setRefundReason(reason);
        orders.update(order);
        log.info("order {} refunded", orderId);
        return order;
    }
}
