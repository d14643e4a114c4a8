// The payslip's Print button (no inline handler: the CSP refuses them).
document.addEventListener("click", function (e) {
  if (e.target.closest && e.target.closest("[data-print]")) window.print();
});
