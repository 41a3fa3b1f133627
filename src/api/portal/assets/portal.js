// The portal's own script (no framework): theme toggle, copy buttons, confirmations and the usage chart.
/* global window, document, navigator, fetch */
'use strict'
;(function () {
  const root = document.documentElement
  const stored = window.localStorage.getItem('antler-theme')
  if (stored === 'light' || stored === 'dark') root.dataset.theme = stored

  function currentTheme() {
    if (root.dataset.theme) return root.dataset.theme
    return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
  }

  function onReady() {
    const toggle = document.getElementById('theme-toggle')
    if (toggle) {
      toggle.textContent = currentTheme() === 'dark' ? 'Light theme' : 'Dark theme'
      toggle.addEventListener('click', function () {
        const next = currentTheme() === 'dark' ? 'light' : 'dark'
        root.dataset.theme = next
        window.localStorage.setItem('antler-theme', next)
        toggle.textContent = next === 'dark' ? 'Light theme' : 'Dark theme'
      })
    }

    for (const button of document.querySelectorAll('button[data-copy]')) {
      button.addEventListener('click', function () {
        const field = document.getElementById(button.dataset.copy)
        const status = document.querySelector('.copied')
        navigator.clipboard.writeText(field.value).then(
          function () {
            if (status) status.textContent = 'Copied to the clipboard.'
          },
          function () {
            field.select()
            if (status) status.textContent = 'Select the key and copy it (the clipboard is not available here).'
          },
        )
      })
    }

    for (const form of document.querySelectorAll('form[data-confirm]')) {
      form.addEventListener('submit', function (event) {
        if (!window.confirm(form.dataset.confirm)) event.preventDefault()
      })
    }

    const chart = document.getElementById('usage-chart')
    if (chart && window.uPlot) drawUsage(chart)
  }

  function drawUsage(element) {
    fetch(element.dataset.src, { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (response) {
        return response.ok ? response.json() : { hours: [] }
      })
      .then(function (usage) {
        if (usage.hours.length === 0) {
          element.textContent = 'No requests in the last 7 days.'
          return
        }
        const series = ['ok', 'client_errors', 'auth_failures', 'rate_limited']
        const data = [usage.hours.map((h) => h.hour)].concat(series.map((name) => usage.hours.map((h) => h[name])))
        const colors = ['#1e7b34', '#8a5a00', '#b3261e', '#6a3fb5']
        const labels = ['OK', '4xx', 'Auth failures', '429']
        // The x axis spans the 7 days the JSON covers (uPlot would otherwise spread a single hour over years).
        const end = Math.ceil(Date.now() / 3600000) * 3600
        const options = {
          width: Math.min(element.clientWidth || 800, 900),
          height: 220,
          scales: { x: { time: true, range: [end - 7 * 24 * 3600, end] } },
          series: [{}].concat(
            labels.map(function (label, i) {
              return { label: label, stroke: colors[i], width: 2 }
            }),
          ),
          axes: [{}, { label: 'requests / hour' }],
        }
        new window.uPlot(options, data, element)
      })
      .catch(function () {
        element.textContent = 'The usage chart could not be loaded.'
      })
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', onReady)
  else onReady()
})()
