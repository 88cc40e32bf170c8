// Starts Swagger UI on /openapi.json (sluice's /docs; kept out of the page so its
// Content-Security-Policy needs no inline script).
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    tryItOutEnabled: false,
  });
});
