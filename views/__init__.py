"""The pages and what draws them: the page shell (shell/), widgets bound to the link (widgets/), the mounted chart
(charts/), one module per page (pages/), and a folder for a page with parts of its own (translate/, encoder_decoder/).
Pages call runtime/ for what the server keeps, model/ for numbers and viz/ for figures."""
