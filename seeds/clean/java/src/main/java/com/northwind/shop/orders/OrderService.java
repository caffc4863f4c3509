package com.northwind.shop.orders;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.validation.constraints.Size;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.dao.OptimisticLockingFailureException;
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
    private static final Duration REFUND_WINDOW = Duration.ofDays(90);

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

    /** The order fields a customer may change before shipment; null leaves a field unchanged. */
    public record OrderDetails(@Size(max = 500) String shippingAddress, @Size(max = 1000) String deliveryNotes) { }

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
        Order order = tx.execute(status -> createOrder(customerId, request));

        // BORDERLINE 1 a GatewayException here (e.g. a read timeout) leaves the order pending with stock reserved; whether a reconciliation job settles such orders is outside this diff
        ChargeResult result = gateway.charge(
                order.getId(), order.getTotal(), order.getCurrency(), request.paymentMethodToken());
        OrderStatus pendingStatus = order.getStatus();
        String actionUrl = null;
        switch (result.status()) {
            case CAPTURED -> order.markPaid(result.transactionId(), Instant.now());
            case REQUIRES_ACTION -> {
                order.awaitCustomerAction(result.transactionId());
                actionUrl = result.actionUrl();
            }
            case DECLINED -> {
                tx.executeWithoutResult(status -> releaseOrder(order));
                throw new PaymentDeclinedException(order.getId(), result.declineCode());
            }
            case FAILED -> {
                tx.executeWithoutResult(status -> releaseOrder(order));
                throw new PaymentUnavailableException(order.getId());
            }
        }
        saveStatus(order, pendingStatus);
        return new CheckoutResult(order, actionUrl);
    }

    private Order createOrder(long customerId, CheckoutRequest request) {
        List<OrderLine> lines = new ArrayList<>();
        BigDecimal total = BigDecimal.ZERO;
        Map<Long, Product> products = orders.findProducts(
                request.items().stream().map(CheckoutRequest.Item::productId).toList());
        for (CheckoutRequest.Item item : request.items()) {
            Product product = products.get(item.productId());
            if (product == null) {
                throw new UnknownProductException(item.productId());
            }
            if (!orders.reserveStock(product.id(), item.quantity())) {
                throw new OutOfStockException(product.id());
            }
            lines.add(new OrderLine(product.id(), item.quantity(), product.price()));
            total = total.add(product.price().multiply(BigDecimal.valueOf(item.quantity())));
        }
        Order order = Order.pending(customerId, shopCurrency, request.shippingAddress(), total);
        long id = orders.insert(order);
        orders.insertLines(id, lines);
        return orders.findById(id).orElseThrow();
    }

    private void releaseOrder(Order order) {
        OrderStatus before = order.getStatus();
        order.setStatus(OrderStatus.PAYMENT_FAILED);
        saveStatus(order, before);
        for (OrderLine line : orders.findLines(order.getId())) {
            orders.restock(line.productId(), line.quantity());
        }
    }

    /** Persists a status transition; fails instead of overwriting a change another request made first. */
    private void saveStatus(Order order, OrderStatus expected) {
        if (!orders.updateStatus(order, expected)) {
            throw new OptimisticLockingFailureException(
                    "order " + order.getId() + " is no longer " + expected + "; it was changed concurrently");
        }
    }

    @Transactional
    public Order updateDetails(long orderId, long customerId, OrderDetails changes) {
        Order order = get(orderId, customerId);
        OrderStatus current = order.getStatus();
        if (current.isShippedOrLater()) {
            throw new InvalidOrderStateException(orderId, current);
        }
        if (!orders.updateDetails(orderId, current, changes.shippingAddress(), changes.deliveryNotes())) {
            throw new OptimisticLockingFailureException("order " + orderId + " changed while it was being edited");
        }
        if (changes.shippingAddress() != null) {
            order.setShippingAddress(changes.shippingAddress());
        }
        if (changes.deliveryNotes() != null) {
            order.setDeliveryNotes(changes.deliveryNotes());
        }
        return order;
    }

    // BORDERLINE 3 the gateway refund runs before the PAID -> REFUNDED write claims the order; concurrent refunds share the idempotency key refund-<transaction> and the losing write fails, and no other PAID transition is in this diff, so this matters only if a writer outside it (e.g. fulfilment shipping the order) changes the status meanwhile
    public Order refund(long orderId, String reason) {
        Order order = orders.findById(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
        if (order.getStatus() != OrderStatus.PAID) {
            throw new InvalidOrderStateException(orderId, order.getStatus());
        }
        if (order.getPaidAt().isBefore(Instant.now().minus(REFUND_WINDOW))) {
            throw new RefundWindowClosedException(orderId);
        }
        try {
            gateway.refund(order.getPaymentTransactionId(), order.getTotal());
        } catch (GatewayException e) {
            throw new RefundFailedException(orderId, e);
        }
        order.setStatus(OrderStatus.REFUNDED);
        order.setRefundReason(reason);
        saveStatus(order, OrderStatus.PAID);
        log.info("order {} refunded", orderId);
        return order;
    }
}
