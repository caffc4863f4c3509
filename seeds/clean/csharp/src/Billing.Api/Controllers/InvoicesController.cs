using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Billing.Api.Data;
using Billing.Api.Services;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.ModelBinding;

namespace Billing.Api.Controllers;

[ApiController]
[Route("api/invoices")]
[Authorize]
public sealed class InvoicesController : ControllerBase
{
    private const int MaxPageSize = 100;
    private const int MaxExportDays = 366;

    private readonly IInvoiceService _invoices;
    private readonly IInvoiceRepository _repository;

    public InvoicesController(IInvoiceService invoices, IInvoiceRepository repository)
    {
        _invoices = invoices;
        _repository = repository;
    }

    /// <summary>The caller's tenant, from the access token's tenant_id claim.</summary>
    private Guid TenantId =>
        Guid.TryParse(User.FindFirstValue("tenant_id"), out var tenantId)
            ? tenantId
            : throw new UnauthorizedAccessException("The access token has no tenant_id claim.");

    [HttpGet]
    public async Task<ActionResult<IReadOnlyList<InvoiceSummaryDto>>> List(
        [FromQuery] string? customer,
        [FromQuery] int page = 1,
        [FromQuery] int pageSize = 25,
        CancellationToken ct = default)
    {
        if (page < 1)
        {
            return BadRequest("page must be 1 or greater.");
        }
        pageSize = Math.Clamp(pageSize, 1, MaxPageSize);
        var invoices = await _repository.SearchAsync(TenantId, customer, page, pageSize, ct);
        return Ok(invoices.Select(InvoiceSummaryDto.From).ToList());
    }

    [HttpGet("{id:int}")]
    public async Task<ActionResult<InvoiceDto>> Get(int id, CancellationToken ct)
    {
        var invoice = await _repository.FindAsync(TenantId, id, ct);
        return invoice is null ? NotFound() : Ok(InvoiceDto.From(invoice));
    }

    [HttpPost]
    [Authorize(Policy = "BillingWrite")]
    public async Task<ActionResult<InvoiceDto>> Create([FromBody] CreateInvoiceRequest request, CancellationToken ct)
    {
        try
        {
            var invoice = await _invoices.CreateAsync(TenantId, request, ct);
            return CreatedAtAction(nameof(Get), new { id = invoice.Id }, InvoiceDto.From(invoice));
        }
        catch (BillingRuleException ex)
        {
            return UnprocessableEntity(new ProblemDetails { Title = ex.Message });
        }
    }

    [HttpPut("{id:int}")]
    [Authorize(Policy = "BillingWrite")]
    public async Task<ActionResult<InvoiceDto>> Update(int id, [FromBody] UpdateInvoiceRequest request, CancellationToken ct)
    {
        try
        {
            var updated = await _invoices.UpdateDraftAsync(TenantId, id, request, ct);
            return updated is null ? NotFound() : Ok(InvoiceDto.From(updated));
        }
        catch (BillingRuleException ex)
        {
            return Conflict(new ProblemDetails { Title = ex.Message });
        }
    }

    [HttpPost("{id:int}/payments")]
    [Authorize(Policy = "BillingWrite")]
    public async Task<ActionResult<PaymentDto>> RecordPayment(
        int id, [FromBody] RecordPaymentRequest request, CancellationToken ct)
    {
        try
        {
            var payment = await _invoices.RecordPaymentAsync(TenantId, id, request, ct);
            return payment is null
                ? NotFound()
                : Ok(new PaymentDto(payment.Id, payment.Amount, payment.Method, payment.ReceivedAtUtc));
        }
        catch (BillingRuleException ex)
        {
            return Conflict(new ProblemDetails { Title = ex.Message });
        }
    }

    [HttpPost("{id:int}/void")]
    [Authorize(Policy = "BillingAdmin")]
    public async Task<IActionResult> Void(int id, [FromBody] VoidInvoiceRequest request, CancellationToken ct)
    {
        try
        {
            var voided = await _invoices.VoidAsync(TenantId, id, request.Reason, ct);
            return voided ? NoContent() : NotFound();
        }
        catch (BillingRuleException ex)
        {
            return Conflict(new ProblemDetails { Title = ex.Message });
        }
    }

    // BORDERLINE 2 returns customer e-mail addresses to every signed-in user of the tenant; fine only if the role model (outside this diff) lets all tenant users see customer contacts
    [HttpGet("overdue")]
    public async Task<ActionResult<IReadOnlyList<OverdueInvoiceDto>>> Overdue(CancellationToken ct) =>
        Ok(await _invoices.GetOverdueAsync(TenantId, ct));

    [HttpGet("export")]
    [Authorize(Policy = "BillingWrite")]
    public async Task<IActionResult> Export(
        [FromQuery, BindRequired] DateOnly from, [FromQuery, BindRequired] DateOnly to, CancellationToken ct)
    {
        if (to < from || to.DayNumber - from.DayNumber >= MaxExportDays)
        {
            return BadRequest($"The export range must be between 1 and {MaxExportDays} days.");
        }
        var csv = await _invoices.ExportCsvAsync(TenantId, from, to, ct);
        return File(csv, "text/csv", $"invoices-{from:yyyyMMdd}-{to:yyyyMMdd}.csv");
    }
}

public sealed record VoidInvoiceRequest([Required, StringLength(500)] string Reason);

public sealed record PaymentDto(int Id, decimal Amount, string Method, DateTime ReceivedAtUtc);

public sealed record InvoiceSummaryDto(int Id, long Number, string CustomerName, string Status, decimal Total, string Currency, DateTime DueAtUtc)
{
    public static InvoiceSummaryDto From(Invoice i) =>
        new(i.Id, i.Number, i.Customer.Name, i.Status.ToString(), i.Total, i.Currency, i.DueAtUtc);
}

public sealed record InvoiceLineDto(string Description, int Quantity, decimal UnitPrice);

public sealed record InvoiceDto(
    int Id, long Number, string CustomerName, string Status, string Currency,
    decimal Subtotal, decimal TaxAmount, decimal Total, DateTime IssuedAtUtc, DateTime DueAtUtc,
    IReadOnlyList<InvoiceLineDto> Lines)
{
    public static InvoiceDto From(Invoice i) =>
        new(i.Id, i.Number, i.Customer.Name, i.Status.ToString(), i.Currency,
            i.Subtotal, i.TaxAmount, i.Total, i.IssuedAtUtc, i.DueAtUtc,
            i.Lines.Select(l => new InvoiceLineDto(l.Description, l.Quantity, l.UnitPrice)).ToList());
}
