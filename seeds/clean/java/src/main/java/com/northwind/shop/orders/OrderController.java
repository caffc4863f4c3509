package com.northwind.shop.orders;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Instant;
import java.util.List;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
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
@CrossOrigin(origins = "${shop.web.origin}", allowCredentials = "true")
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
            @RequestParam(defaultValue = "20") @Min(1) @Max(100) int size) {
        return orderService.listForCustomer(user.customerId(), page, size).stream()
                .map(OrderView::from)
                .toList();
    }

    @GetMapping("/{id}")
    public OrderView get(@AuthenticationPrincipal ShopUser user, @PathVariable long id) {
        return OrderView.from(orderService.get(id, user.customerId()));
    }

    // BORDERLINE 5 checkout takes no client idempotency key, so a client or proxy that retries a POST whose response was lost creates a second order and charge (the gateway key is per order); whether clients retry checkout or dedupe it upstream is outside this diff
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

    @PatchMapping("/{id}")
    public OrderView update(
            @AuthenticationPrincipal ShopUser user,
            @PathVariable long id,
            @Valid @RequestBody OrderService.OrderDetails changes) {
        return OrderView.from(orderService.updateDetails(id, user.customerId(), changes));
    }

    // BORDERLINE 4 the refund records its reason but not the support user who issued it; whether refunds are attributed elsewhere (an access or audit log keyed by principal) is outside this diff
    @PostMapping("/{id}/refund")
    @PreAuthorize("hasRole('SUPPORT')")
    public OrderView refund(@PathVariable long id, @Valid @RequestBody RefundRequest request) {
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
