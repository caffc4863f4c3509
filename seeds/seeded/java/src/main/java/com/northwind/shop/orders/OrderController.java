package com.northwind.shop.orders;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Instant;
import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.PositiveOrZero;
import jakarta.validation.constraints.Size;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.validation.annotation.Validated;
import org.springframework.web.bind.annotation.CrossOrigin;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import com.northwind.shop.security.ShopUser;

@RestController
@Validated
@RequestMapping("/api/orders")
// SEED 10 [CRITICAL] (core/cors-misconfiguration) any origin is reflected with allowCredentials, so a page on any site can call these endpoints with the shopper's session cookie and read their orders
@CrossOrigin(originPatterns = "*", allowCredentials = "true")
public class OrderController {

    private final OrderService orderService;
    private final OrderRepository orderRepository;

    public OrderController(OrderService orderService, OrderRepository orderRepository) {
        this.orderService = orderService;
        this.orderRepository = orderRepository;
    }

    public record OrderView(
            long id,
            OrderStatus status,
            BigDecimal total,
            String currency,
            String shippingAddress,
            String deliveryNotes,
            Instant createdAt) {

        static OrderView from(Order order) {
            return new OrderView(order.getId(), order.getStatus(), order.getTotal(), order.getCurrency(),
                    order.getShippingAddress(), order.getDeliveryNotes(), order.getCreatedAt());
        }
    }

    public record CheckoutResponse(OrderView order, String actionUrl) { }

    public record RefundRequest(@NotBlank @Size(max = 500) String reason) { }

    @GetMapping
    public List<OrderView> list(
            @AuthenticationPrincipal ShopUser user,
            @RequestParam(defaultValue = "0") @PositiveOrZero int page,
            // SEED 13 [MINOR] (core/unbounded-resource) the page size comes straight from the client with no bounds: size=10000000 loads and serialises a customer's entire history in one request (only as large as that customer's own orders), and a negative size reaches LIMIT and answers 500
            @RequestParam(defaultValue = "20") int size) {
        return orderService.listForCustomer(user.customerId(), page, size).stream()
                .map(OrderView::from)
                .toList();
    }

    @GetMapping("/{id}")
    public OrderView get(@AuthenticationPrincipal ShopUser user, @PathVariable long id) {
        return OrderView.from(orderService.get(id, user.customerId()));
    }

    @PostMapping("/checkout")
    public ResponseEntity<CheckoutResponse> checkout(
            @AuthenticationPrincipal ShopUser user, @Valid @RequestBody CheckoutRequest request) {
        OrderService.CheckoutResult result = orderService.checkout(user.customerId(), request);
        CheckoutResponse body = new CheckoutResponse(OrderView.from(result.order()), result.actionUrl());
        HttpStatus status = result.actionUrl() == null ? HttpStatus.CREATED : HttpStatus.ACCEPTED;
        return ResponseEntity.status(status)
                .location(URI.create("/api/orders/" + result.order().getId()))
                .body(body);
    }

    // SITE 11 the PATCH body is bound onto the persistence entity itself, which the service then copies onto the stored order
    @PatchMapping("/{id}")
    public OrderView update(
            @AuthenticationPrincipal ShopUser user, @PathVariable long id, @RequestBody Order changes) {
        return OrderView.from(orderService.updateDetails(id, user.customerId(), changes));
    }

    // SEED 12 [BLOCKER] (core/missing-authorization) unlike search, the refund endpoint has no @PreAuthorize("hasRole('SUPPORT')") and no ownership check, so any signed-in shopper can refund any order by id
    @PostMapping("/{id}/refund")
    public OrderView refund(
            @AuthenticationPrincipal ShopUser user, @PathVariable long id, @Valid @RequestBody RefundRequest request) {
        Order refunded = orderService.refund(id, request.reason());
        return OrderView.from(refunded);
    }

    @GetMapping("/search")
    @PreAuthorize("hasRole('SUPPORT')")
    public List<OrderView> search(
            @RequestParam @Size(min = 3, max = 254) String customerEmail,
            @RequestParam(required = false) OrderStatus status) {
        return orderRepository.search(customerEmail, status, 100).stream()
                .map(OrderView::from)
                .toList();
    }
}
