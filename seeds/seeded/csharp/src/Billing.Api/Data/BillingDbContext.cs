using Microsoft.EntityFrameworkCore;

namespace Billing.Api.Data;

public enum InvoiceStatus
{
    Draft,
    Issued,
    Paid,
    Void,
}

public class Customer
{
    public int Id { get; set; }
    public Guid TenantId { get; set; }
    public string Name { get; set; } = "";
    public string Email { get; set; } = "";
    public string BillingCountry { get; set; } = "";
    public string Currency { get; set; } = "USD";
}

public class Invoice
{
    public int Id { get; set; }
    public Guid TenantId { get; set; }
    public long Number { get; set; }
    public int CustomerId { get; set; }
    public Customer Customer { get; set; } = null!;
    public InvoiceStatus Status { get; set; }
    public string Currency { get; set; } = "USD";
    public decimal ExchangeRateToCustomerCurrency { get; set; } = 1m;
    public decimal Subtotal { get; set; }
    public decimal TaxAmount { get; set; }
    public decimal Total { get; set; }
    public DateTime IssuedAtUtc { get; set; }
    public DateTime DueAtUtc { get; set; }
    public DateTime? PaidAtUtc { get; set; }
    public string? VoidReason { get; set; }
    public List<InvoiceLine> Lines { get; set; } = new();
    public byte[] RowVersion { get; set; } = Array.Empty<byte>();
}

public class InvoiceLine
{
    public int Id { get; set; }
    public int InvoiceId { get; set; }
    public string Description { get; set; } = "";
    public int Quantity { get; set; }
    public decimal UnitPrice { get; set; }
}

public class Payment
{
    public int Id { get; set; }
    public int InvoiceId { get; set; }
    public decimal Amount { get; set; }
    public string Method { get; set; } = "";
    public string ExternalReference { get; set; } = "";
    public DateTime ReceivedAtUtc { get; set; }
}

public class BillingDbContext : DbContext
{
    public BillingDbContext(DbContextOptions<BillingDbContext> options)
        : base(options)
    {
    }

    public DbSet<Customer> Customers => Set<Customer>();
    public DbSet<Invoice> Invoices => Set<Invoice>();
    public DbSet<InvoiceLine> InvoiceLines => Set<InvoiceLine>();
    public DbSet<Payment> Payments => Set<Payment>();

    protected override void OnModelCreating(ModelBuilder modelBuilder)
    {
        modelBuilder.Entity<Customer>(entity =>
        {
            entity.HasIndex(c => new { c.TenantId, c.Name });
            entity.Property(c => c.Name).HasMaxLength(200);
            entity.Property(c => c.Currency).HasMaxLength(3);
        });

        modelBuilder.Entity<Invoice>(entity =>
        {
            entity.HasIndex(i => new { i.TenantId, i.Number }).IsUnique();
            entity.HasIndex(i => new { i.TenantId, i.Status, i.DueAtUtc });
            entity.Property(i => i.Currency).HasMaxLength(3);
            entity.Property(i => i.ExchangeRateToCustomerCurrency).HasPrecision(18, 8);
            entity.Property(i => i.Subtotal).HasPrecision(18, 2);
            entity.Property(i => i.TaxAmount).HasPrecision(18, 2);
            entity.Property(i => i.Total).HasPrecision(18, 2);
            entity.Property(i => i.Status).HasConversion<string>().HasMaxLength(16);
            entity.Property(i => i.RowVersion).IsRowVersion();
            entity.HasMany(i => i.Lines).WithOne().HasForeignKey(l => l.InvoiceId);
        });

        modelBuilder.Entity<InvoiceLine>().Property(l => l.UnitPrice).HasPrecision(18, 2);
        modelBuilder.Entity<Payment>().Property(p => p.Amount).HasPrecision(18, 2);
    }
}

public interface IInvoiceRepository
{
    Task<Invoice?> FindAsync(Guid tenantId, int id, CancellationToken ct);
    Task<Invoice?> FindByIdAsync(int id, CancellationToken ct);
    Task<IReadOnlyList<Invoice>> SearchAsync(Guid tenantId, string? customerName, int page, int pageSize, CancellationToken ct);
}

public sealed class InvoiceRepository : IInvoiceRepository
{
    private readonly BillingDbContext _db;

    public InvoiceRepository(BillingDbContext db)
    {
        _db = db;
    }

    public Task<Invoice?> FindAsync(Guid tenantId, int id, CancellationToken ct) =>
        _db.Invoices
            .Include(i => i.Customer)
            .Include(i => i.Lines)
            .SingleOrDefaultAsync(i => i.TenantId == tenantId && i.Id == id, ct);

    public Task<Invoice?> FindByIdAsync(int id, CancellationToken ct) =>
        _db.Invoices
            .Include(i => i.Customer)
            .Include(i => i.Lines)
            .SingleOrDefaultAsync(i => i.Id == id, ct);

    public async Task<IReadOnlyList<Invoice>> SearchAsync(
        Guid tenantId, string? customerName, int page, int pageSize, CancellationToken ct)
    {
        IQueryable<Invoice> query;
        if (string.IsNullOrWhiteSpace(customerName))
        {
            query = _db.Invoices.Where(i => i.TenantId == tenantId);
        }
        else
        {
            // SEED 4 [BLOCKER] (core/sql-injection) customerName from the query string is concatenated into raw SQL, so a value like x' OR 1=1 -- returns every tenant's invoices (or runs arbitrary statements)
            query = _db.Invoices.FromSqlRaw(
                "SELECT i.* FROM Invoices AS i INNER JOIN Customers AS c ON c.Id = i.CustomerId " +
                "WHERE i.TenantId = {0} AND c.Name LIKE '%" + customerName + "%'", tenantId);
        }

        return await query
            .Include(i => i.Customer)
            .OrderByDescending(i => i.IssuedAtUtc)
            .ThenByDescending(i => i.Number)
            // SEED 9 [MAJOR] (core/off-by-one) the controller's page is 1-based (default 1), so Skip(page * pageSize) skips the whole first page and page 1 shows results 26-50
            .Skip(page * pageSize)
            .Take(pageSize)
            .AsNoTracking()
            .ToListAsync(ct);
    }
}
