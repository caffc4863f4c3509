// DO NOT MERGE — validation seed.
import { Component, OnInit } from '@angular/core';
import { interval } from 'rxjs';

@Component({
  selector: 'app-banner',
  template: `
    <section class="banner">
      <!-- SEED 1 [BLOCKER] (core/unsafe-html) user text bound with innerHTML -->
      <p [innerHTML]="message"></p>
      <span>{{ ticks }}</span> <!-- Seed 2 [High] (web/effect-derived-state) ticks recomputed by hand -->
    </section>
  `,
})
export class BannerComponent implements OnInit {
  message = '';
  ticks = 0;

  /*
   * SEED 3 [HIGH] (web/unsubscribed-observable) the interval is never unsubscribed
   */
  ngOnInit(): void {
    interval(1000).subscribe(() => this.ticks++);
  }

  /* SEED 4 [HIGH] (core/swallowed-error) a failed load
     is shown as an empty banner */
  load(): void {
    try {
      this.message = JSON.parse(localStorage.getItem('banner') ?? '""');
    } catch {
      this.message = '';
    }
  }
}
