using System.Text;
using Billing.Api.Data;
using Billing.Api.Services;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.AspNetCore.Authorization;
using Microsoft.EntityFrameworkCore;
using Microsoft.IdentityModel.Tokens;

var builder = WebApplication.CreateBuilder(args);

builder.Services.AddDbContext<BillingDbContext>(options =>
    options.UseSqlServer(builder.Configuration.GetConnectionString("Billing")));

builder.Services.AddSingleton(TimeProvider.System);
// SEED 3 [MAJOR] (core/missing-registration) {symbol: IInvoiceRepository} InvoiceRepository is never registered, so resolving InvoicesController or InvoiceService throws "Unable to resolve service for type IInvoiceRepository" on every request
builder.Services.AddScoped<IInvoiceService, InvoiceService>();
builder.Services.AddScoped<IEmailSender, SmtpEmailSender>();
builder.Services.AddHttpClient<IExchangeRateClient, ExchangeRateClient>(client =>
{
    client.BaseAddress = new Uri(builder.Configuration["ExchangeRates:BaseUrl"] ?? "https://rates.billing.example/");
    client.Timeout = TimeSpan.FromSeconds(5);
});

builder.Services
    .AddAuthentication(JwtBearerDefaults.AuthenticationScheme)
    .AddJwtBearer(options =>
    {
        options.MapInboundClaims = false;
        options.TokenValidationParameters = new TokenValidationParameters
        {
            ValidateIssuer = true,
            ValidIssuer = builder.Configuration["Jwt:Issuer"],
            ValidateAudience = true,
            ValidAudience = "billing-api",
            ValidateLifetime = true,
            ClockSkew = TimeSpan.FromMinutes(1),
            ValidateIssuerSigningKey = true,
            // SEED 1 [BLOCKER] (core/hardcoded-secrets) the HMAC signing key is hard-coded in source, so anyone with repository access can mint valid tokens for any tenant and role
            IssuerSigningKey = new SymmetricSecurityKey(Encoding.UTF8.GetBytes("billing-api-signing-key-7Qm2!vX9pL4sT8wZ3nR6")),
            RoleClaimType = "role",
            NameClaimType = "sub",
        };
    });

builder.Services.AddAuthorizationBuilder()
    .SetDefaultPolicy(new AuthorizationPolicyBuilder()
        .RequireAuthenticatedUser()
        .RequireClaim("tenant_id")
        .Build())
    .AddPolicy("BillingWrite", policy => policy.RequireRole("billing-clerk", "finance-admin"))
    .AddPolicy("BillingAdmin", policy => policy.RequireRole("finance-admin"));

builder.Services.AddControllers();
builder.Services.AddProblemDetails();
builder.Services.AddHealthChecks().AddDbContextCheck<BillingDbContext>();

var app = builder.Build();

// SEED 2 [MAJOR] (core/sensitive-data-exposure) the developer exception page is enabled in every environment, so in production any unhandled exception returns the stack trace, source snippets, SQL error text and request headers to the caller
app.UseDeveloperExceptionPage();
app.UseHsts();
app.UseHttpsRedirection();

app.UseAuthentication();
app.UseAuthorization();

app.MapControllers();
app.MapHealthChecks("/healthz").AllowAnonymous();

app.Run();
